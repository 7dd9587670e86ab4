// slurm_script.hpp — a plan directory (plan_dir.hpp) as Slurm batch scripts (docs/cluster.md): a job array whose
// element e runs tasks e·pack … e·pack + pack − 1 with `gradflow task` (pack = the element's CPUs, or more when the
// plan has more tasks than the cluster's MaxArraySize allows array indices), throttled to K elements at once (`%K`), and a merge job that
// sbatch starts after the array (--dependency=afterany). Only elements holding a task without a result are listed,
// so a resubmission runs only what is missing.
#pragma once
#include <string>
#include <vector>

namespace gradflow {

inline constexpr int kDefaultMaxArraySize = 1001;  // Slurm's default MaxArraySize (indices 0 … 1000)

struct SlurmSettings {
  std::string partition, time, mem, account;  // "" = the cluster's default; time and mem: per array element
  std::string merge_time, merge_mem;           // the merge job's own ("" = the cluster's default, not the array's)
  std::string gres;                            // per array element, e.g. "gpu:1" for a plan run with --device cuda
  int cpus_per_task = 1;
  int max_running = 0;          // %K: elements running at once (0: no limit)
  std::string gradflow;         // the executable (absolute path, as compute nodes see it)
  std::string dir;              // the plan directory (absolute)
  std::string json, csv;        // the merge job's outputs ("" = not written)
  std::string name;             // the job name
};

struct ArrayLayout {
  int tasks = 0;              // tasks in the plan
  int pack = 1;               // tasks per array element
  std::vector<int> elements;  // the array indices to run (those holding a missing task)
};

// The layout for `tasks` tasks of which `missing` lack a result: `min_pack` tasks per element (its CPUs: an element
// runs its tasks side by side, one engine per CPU), more when array indices would otherwise reach max_array_size.
ArrayLayout array_layout(int tasks, const std::vector<int>& missing, int max_array_size, int min_pack = 1);
// "0-5,7,9-12" (indices sorted ascending).
std::string index_ranges(const std::vector<int>& indices);
std::string slurm_array_script(const SlurmSettings& s, const ArrayLayout& a);
std::string slurm_merge_script(const SlurmSettings& s);
// MaxArraySize from the text of `scontrol show config`; 0 when it is not there.
int parse_max_array_size(const std::string& scontrol_config);
// `s` quoted for a POSIX shell ('...', with ' written as '\'').
std::string shell_quote(const std::string& s);
// `s` as one word of a printed command (a hint to copy): bare when it is only letters, digits and _@%+=:,./-, else
// shell_quote(s).
std::string shell_word(const std::string& s);
// `s` as the argument of a #SBATCH directive: in double quotes with \ and " escaped by a backslash, as sbatch reads
// directive arguments (quotes, backslash escapes, an unquoted # starting a comment).
std::string sbatch_word(const std::string& s);
// `s` with % doubled: a literal part of a Slurm filename pattern (--output), where %A, %a, %j, %x... are expanded.
std::string slurm_pattern_literal(const std::string& s);
// Error (exit 2) naming the option and Slurm's form of it for a value outside that form (--partition, --account,
// --time, --mem, --gres, --merge-time, --merge-mem: a value written into a #SBATCH line may hold nothing else, so a
// newline can never start a shell command in the job), and for a path (the plan directory, --json, --csv, the
// gradflow executable) holding a control character, which no directive, comment or shell word can hold safely.
void validate_slurm_settings(const SlurmSettings& s);

}  // namespace gradflow
