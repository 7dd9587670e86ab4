// slurm_script.cpp — see slurm_script.hpp.
#include "gradflow/experiments/slurm_script.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>
#include <sstream>

#include "gradflow/core/error.hpp"
#include "io/file_bytes.hpp"

namespace gradflow {

ArrayLayout array_layout(int tasks, const std::vector<int>& missing, int max_array_size, int min_pack) {
  require(max_array_size >= 1, "MaxArraySize must be at least 1 (got " + std::to_string(max_array_size) +
                                   "); fix: e.g. --max-array-size 1001");
  ArrayLayout a;
  a.tasks = tasks;
  a.pack = std::max(std::max(min_pack, 1), tasks <= max_array_size ? 1 : (tasks + max_array_size - 1) / max_array_size);
  for (int id : missing) {
    const int e = id / a.pack;
    if (a.elements.empty() || a.elements.back() != e) a.elements.push_back(e);
  }
  return a;
}

std::string index_ranges(const std::vector<int>& indices) {
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(indices[i]);
    if (j > i) out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell_word(const std::string& s) {
  const bool bare = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_@%+=:,./-", c) != nullptr;
  });
  return bare ? s : shell_quote(s);
}

std::string sbatch_word(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string slurm_pattern_literal(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

namespace {

// Slurm's forms (sbatch(1)): a time limit is minutes, minutes:seconds, hours:minutes:seconds, days-hours,
// days-hours:minutes or days-hours:minutes:seconds, or UNLIMITED/INFINITE; memory a whole number with an optional
// unit K, M, G or T; partitions a comma-separated list of names; an account a name; --gres a comma-separated list
// of name[:type][:count] (a name may carry a "gres/" prefix).
const std::regex kTime(R"(\d+(:\d+){0,2}|\d+-\d+(:\d+){0,2}|(?:UNLIMITED|INFINITE|unlimited|infinite))");
const std::regex kMem(R"(\d+[KMGTkmgt]?)");
const std::regex kName(R"([A-Za-z0-9_.\-]+)");
const std::regex kNames(R"([A-Za-z0-9_.\-]+(,[A-Za-z0-9_.\-]+)*)");
const std::regex kGres(R"([A-Za-z0-9_./\-]+(:[A-Za-z0-9_.\-]+)*(,[A-Za-z0-9_./\-]+(:[A-Za-z0-9_.\-]+)*)*)");

// The longest value checked against a form: std::regex matches recursively, one frame per character, so a value of
// tens of thousands of characters would overflow the stack; Slurm's own values are a few dozen characters.
constexpr size_t kMaxFormLength = 256;

void check_form(const std::string& value, const std::regex& form, const std::string& option, const std::string& fix) {
  if (value.size() > kMaxFormLength)
    throw Error(option + " is " + std::to_string(value.size()) + " characters long, more than the " +
                std::to_string(kMaxFormLength) + " any of Slurm's values needs; fix: " + fix);
  if (value.empty() || std::regex_match(value, form)) return;
  throw Error(option + " '" + io_detail::printable(value) + "' is not in Slurm's form for it (a #SBATCH line holds "
              "nothing else); fix: " + fix);
}

}  // namespace

void validate_slurm_settings(const SlurmSettings& s) {
  const std::string time_fix = "give minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (e.g. 00:30:00)";
  const std::string mem_fix = "give a whole number with an optional unit K, M, G or T (e.g. 4G)";
  check_form(s.partition, kNames, "--partition", "give partition names (letters, digits, _ . -), comma-separated");
  check_form(s.account, kName, "--account", "give the account's name (letters, digits, _ . -)");
  check_form(s.time, kTime, "--time", time_fix);
  check_form(s.merge_time, kTime, "--merge-time", time_fix);
  check_form(s.mem, kMem, "--mem", mem_fix);
  check_form(s.merge_mem, kMem, "--merge-mem", mem_fix);
  check_form(s.gres, kGres, "--gres", "give name[:type][:count], comma-separated (e.g. gpu:1)");
  for (const auto& [what, path] : {std::pair<std::string, std::string>{"the plan directory", s.dir},
                                   {"--json", s.json}, {"--csv", s.csv}, {"--gradflow", s.gradflow}})
    require(!io_detail::has_control_char(path), what + " '" + io_detail::printable(path) + "' holds a control "
                "character (a newline?), which no batch script can hold safely; fix: use a path without one");
}

namespace {

// The #SBATCH lines both jobs write: the job name, the account and partition they share, the job's own time limit,
// and the log file.
void common_lines(std::ostream& os, const SlurmSettings& s, const std::string& name, const std::string& time,
                  const std::string& log) {
  os << "#SBATCH --job-name=" << sbatch_word(name) << "\n";
  if (!s.partition.empty()) os << "#SBATCH --partition=" << s.partition << "\n";
  if (!s.account.empty()) os << "#SBATCH --account=" << s.account << "\n";
  if (!time.empty()) os << "#SBATCH --time=" << time << "\n";
  os << "#SBATCH --output=" << sbatch_word(slurm_pattern_literal(s.dir) + "/slurm/" + log) << "\n";
}

}  // namespace

std::string slurm_array_script(const SlurmSettings& s, const ArrayLayout& a) {
  std::ostringstream os;
  os << "#!/bin/bash\n"
     << "# Written by `gradflow slurm` (docs/cluster.md): the tasks of the plan in " << s.dir << "\n"
     << "# that had no result when it was written, as a job array; `gradflow slurm --submit` again writes and submits\n"
     << "# a new one for the tasks still missing.\n";
  common_lines(os, s, s.name, s.time, "task-%A_%a.out");
  os << "#SBATCH --array=" << index_ranges(a.elements) << (s.max_running > 0 ? "%" + std::to_string(s.max_running) : "")
     << "\n";
  os << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=" << s.cpus_per_task << "\n";
  if (!s.mem.empty()) os << "#SBATCH --mem=" << s.mem << "\n";
  if (!s.gres.empty()) os << "#SBATCH --gres=" << s.gres << "\n";
  os << "# Element e runs tasks e*" << a.pack << " to e*" << a.pack << "+" << a.pack - 1 << " (of " << a.tasks
     << "), side by side on its CPUs\n"
     << "# (gradflow task takes its thread count from SLURM_CPUS_PER_TASK); a task with a result is skipped.\n"
     << "set -eu\n"
     << "first=$((SLURM_ARRAY_TASK_ID * " << a.pack << "))\n"
     << "last=$((first + " << a.pack - 1 << "))\n"
     << "if [ \"$last\" -gt " << a.tasks - 1 << " ]; then last=" << a.tasks - 1 << "; fi\n"
     << "exec " << shell_quote(s.gradflow) << " task " << shell_quote(s.dir) << " \"$first-$last\"\n";
  return os.str();
}

std::string slurm_merge_script(const SlurmSettings& s) {
  std::ostringstream os;
  os << "#!/bin/bash\n"
     << "# Written by `gradflow slurm` (docs/cluster.md): merges the results of the plan in " << s.dir << "\n"
     << "# once the array has ended (--dependency=afterany); exit 2 and the missing tasks listed when some failed.\n";
  // its own limits: it reads the reports and writes one, so the array's per-element --time/--mem would only make it
  // wait longer in the queue
  common_lines(os, s, s.name + "-merge", s.merge_time, "merge-%j.out");
  os << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  if (!s.merge_mem.empty()) os << "#SBATCH --mem=" << s.merge_mem << "\n";
  os << "exec " << shell_quote(s.gradflow) << " merge " << shell_quote(s.dir);
  if (!s.json.empty()) os << " --json " << shell_quote(s.json);
  if (!s.csv.empty()) os << " --csv " << shell_quote(s.csv);
  os << " -q\n";
  return os.str();
}

int parse_max_array_size(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t k = line.find("MaxArraySize");
    const size_t eq = line.find('=');
    if (k == std::string::npos || eq == std::string::npos || eq < k) continue;
    try {
      return std::stoi(line.substr(eq + 1));
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

}  // namespace gradflow
