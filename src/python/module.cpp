// module.cpp — the Python module's native part, `gradflow._gradflow` (docs/python.md): the library's own calls with
// the command line's parsing. Python (src/python/gradflow/__init__.py) turns keyword arguments into the command
// line's words, so every option is parsed, checked and refused exactly as the command line does it, and the reports
// are the same JSON (returned as text and parsed by Python's json, whose doubles round-trip exactly).
// Computation runs on one worker thread with the GIL released, stopped by Ctrl-C (interruptible). Arrays come in as
// float64 (C order); a Jacobian goes out without a copy.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <cmath>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gradflow/model/placement.hpp"
#include "gradflow/commands/analyze_command.hpp"
#include "gradflow/core/cancel.hpp"
#include "gradflow/commands/experiment_command.hpp"
#include "gradflow/commands/train_command.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/experiments/report_files.hpp"
#include "gradflow/report/decimal_options.hpp"
#include "gradflow/report/json_text.hpp"
#include "gradflow/core/sha256.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/run/model_files.hpp"
#include "gradflow/run/model_options.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/train/train_csv.hpp"
#include "linalg/blas_kernel.hpp"

namespace py = pybind11;
using gradflow::Error;
using Json = nlohmann::ordered_json;

namespace {

// Parses `args` (the words after the command, e.g. {"--layers", "4"}) with the options registered on `app`.
// A keyword argument the command does not take is named as one.
void parse(CLI::App& app, const std::vector<std::string>& args, const std::string& function) {
  std::vector<const char*> argv{"gradflow"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.allow_extras();
  gradflow::decimal_numbers_only(app);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    throw Error(std::string(e.what()) + "; fix: see help(gradflow." + function + ") and docs/python.md");
  }
  for (const std::string& extra : app.remaining()) {
    if (extra.rfind("--", 0) != 0) continue;  // the value of the unknown keyword
    std::string keyword = extra.substr(2);
    for (char& c : keyword) c = c == '-' ? '_' : c;
    throw Error("gradflow." + function + "() has no keyword argument '" + keyword + "' (no option " + extra +
                "); fix: see help(gradflow." + function + ") and docs/python.md for the options it takes");
  }
  if (!app.remaining().empty())
    throw Error("unexpected value '" + app.remaining().front() + "'; fix: see help(gradflow." + function + ")");
}

// The one worker thread every computation runs on, started on first use and kept (never destroyed: it may be
// waiting when the interpreter exits): a thread of its own keeps its OpenMP team between calls, where a new thread
// per call paid ~20 ms to start one. Calls from several Python threads run one after the other, each known by its
// id, so that Ctrl-C cancels only the call it interrupted (cancel below).
class Worker {
 public:
  static Worker& get() {
    static Worker* w = nullptr;  // leaked on purpose (see above)
    static pid_t owner = 0;
    static std::mutex starting;
    std::lock_guard<std::mutex> lock(starting);
    if (!w || owner != ::getpid()) {  // first use, or a forked child (which has none of the parent's threads)
      w = new Worker;
      owner = ::getpid();
    }
    return *w;
  }
  // Queues `job`; returns its id.
  uint64_t post(std::function<void()> job) {
    uint64_t id = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      id = ++last_id_;
      jobs_.push_back({id, std::move(job)});
    }
    ready_.notify_one();
    return id;
  }
  enum class Cancel { Dequeued, Running, Finished };
  // Cancels job `id` alone: still queued, it is removed (it never runs: its caller raises at once); running, the
  // library is asked to stop it (core/cancel.hpp; the flag is cleared before each job starts, under the same lock,
  // so a request never reaches another job); finished, nothing.
  Cancel cancel(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
      if (it->first == id) {
        jobs_.erase(it);
        return Cancel::Dequeued;
      }
    if (running_ != id) return Cancel::Finished;
    gradflow::request_cancel();
    return Cancel::Running;
  }

 private:
  Worker() { std::thread([this] { loop(); }).detach(); }
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return !jobs_.empty(); });
        job = std::move(jobs_.front().second);
        running_ = jobs_.front().first;
        jobs_.pop_front();
        gradflow::clear_cancel();  // a request meant for an earlier job ends with it
      }
      job();
      std::lock_guard<std::mutex> lock(mutex_);
      running_ = 0;
    }
  }
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::pair<uint64_t, std::function<void()>>> jobs_;
  uint64_t last_id_ = 0, running_ = 0;
};

// Runs `work` (which must not touch Python objects) on the worker thread while the interpreter's thread waits with
// the GIL released, looking at Python's signals every 50 ms: Ctrl-C cancels this call alone (Worker::cancel): still
// queued behind another thread's call, it raises KeyboardInterrupt at once and never runs; running, the library
// stops at its next check (core/cancel.hpp: between blocks, sweep steps, Lanczos steps, training steps) and then
// KeyboardInterrupt is raised. The work's own exception (gradflow::Error: gradflow.Error) is rethrown here; its
// result returned.
template <class F>
auto interruptible(F work) -> decltype(work()) {
  using R = decltype(work());
  auto task = std::make_shared<std::packaged_task<R()>>(std::move(work));
  std::future<R> done = task->get_future();
  bool interrupted = false;
  {
    py::gil_scoped_release unlocked;
    const uint64_t id = Worker::get().post([task] { (*task)(); });
    while (done.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      py::gil_scoped_acquire locked;
      if (PyErr_CheckSignals() != 0) {  // a handler raised (KeyboardInterrupt): it stays set for the throw below
        interrupted = true;
        break;
      }
    }
    if (interrupted && Worker::get().cancel(id) == Worker::Cancel::Dequeued) {
      // never ran: nothing to wait for
    } else {
      done.wait();  // the library stops at its next check
    }
  }
  if (interrupted) throw py::error_already_set();
  return done.get();
}

// A 2-D float64 array of finite values as the library's in-memory .npy (its SHA-256: of the float64 bytes in C
// order, so a result is reused only for the same values); null for None.
std::shared_ptr<const gradflow::NpyArray> as_npy(const py::object& obj, const std::string& name) {
  if (obj.is_none()) return nullptr;
  // real numbers only: NumPy's cast would take a complex array's real part (a warning at most), parse strings
  // ("1.5"), read booleans as 0 and 1 and drop a masked array's mask
  const py::module_ np = py::module_::import("numpy");
  if (py::isinstance(obj, np.attr("ma").attr("MaskedArray")))
    throw Error(name + " is a masked array, whose mask would be ignored; fix: pass a plain array (fill the masked "
                       "entries first, e.g. " + name + ".filled(0.0))");
  const std::string kind = py::str(np.attr("asarray")(obj).attr("dtype").attr("kind"));
  if (kind != "f" && kind != "i" && kind != "u")
    throw Error(name + " holds " + std::string(py::str(np.attr("asarray")(obj).attr("dtype"))) + " values, not real "
                "numbers; fix: pass a float64 array (float32, float16 and integer arrays are converted to float64)");
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(obj);
  if (!a) throw Error(name + " is not an array of numbers; fix: pass a NumPy array of shape (n, d)");
  if (a.ndim() != 2 && !(a.ndim() == 3 && a.shape(0) == 1))
    throw Error(name + " has " + std::to_string(a.ndim()) + " dimensions; fix: pass an array of shape (n, d)");
  auto out = std::make_shared<gradflow::NpyArray>();
  out->path = "<" + name + ": a NumPy array>";
  out->descr = "<f8";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) out->shape.push_back(a.shape(i));
  out->data.assign(a.data(), a.data() + a.size());
  for (double v : out->data)
    if (!std::isfinite(v)) throw Error(name + " holds NaN or Inf; fix: pass finite values");
  out->sha256 = gradflow::sha256_hex(std::string_view(reinterpret_cast<const char*>(out->data.data()),
                                                      out->data.size() * sizeof(double)));
  return out;
}

// Puts the arrays x (the input x_0) and g (the cotangent dL/dy) in the settings' files, read once with the files the
// options name (--weights), so resolve() sizes the model by them as it does by --input and --cotangent files.
void attach_arrays(gradflow::ModelSettings& s, const py::object& x, const py::object& g) {
  const auto xa = as_npy(x, "x"), ga = as_npy(g, "cotangent");
  if (!xa && !ga) return;
  gradflow::RunConfig base = s.rc;
  if (xa) base.input.clear();
  if (ga) base.cotangent.clear();
  auto files = std::make_shared<gradflow::RunFiles>(*gradflow::load_run_files(base));
  if (xa) {
    if (!s.rc.input.empty()) throw Error("x and input= both give x_0; fix: pass one of them");
    s.rc.input = files->input_path = xa->path;
    files->input = xa;
  }
  if (ga) {
    if (!s.rc.cotangent.empty()) throw Error("cotangent (an array) and cotangent= (a file) both give g; fix: pass one");
    s.rc.cotangent = files->cotangent_path = ga->path;
    files->cotangent = ga;
  }
  s.rc.files = files;
}

std::string analyze(const std::vector<std::string>& args, const py::object& x, const py::object& g, bool progress) {
  gradflow::AnalyzeRequest r;
  CLI::App app("analyze");
  gradflow::add_analyze_options(app, r);
  parse(app, args, "analyze");
  gradflow::note_given_analyze_options(app, r);
  r.quiet = !progress;
  attach_arrays(r.model, x, g);
  return interruptible([&r] { return gradflow::json_text(gradflow::run_analyze_request(r)); });
}

gradflow::ModelSettings model_settings(const std::vector<std::string>& args, const std::string& function) {
  gradflow::ModelSettings s;
  CLI::App app(function);
  gradflow::add_model_options(app, s);
  parse(app, args, function);
  return s;
}

void check_model(const std::vector<std::string>& args) {
  const gradflow::ModelSettings s = model_settings(args, "Model");
  interruptible([&s] { return gradflow::resolve(s).model.layers; });  // a checkpoint may take a while to read
}

// dx_to/dx_from as an array that owns the library's matrix (no copy; writable).
py::array jacobian(const std::vector<std::string>& args, gradflow::Index from, std::optional<gradflow::Index> to,
                   const py::object& x) {
  gradflow::ModelSettings s = model_settings(args, "jacobian");
  attach_arrays(s, x, py::none());
  auto* m = new gradflow::Mat(interruptible([&] { return gradflow::model_jacobian(gradflow::resolve(s), from, to); }));
  py::capsule owner(m, [](void* p) { delete static_cast<gradflow::Mat*>(p); });
  const auto rows = static_cast<py::ssize_t>(m->rows()), cols = static_cast<py::ssize_t>(m->cols());
  return py::array_t<double>({rows, cols}, {cols * static_cast<py::ssize_t>(sizeof(double)),
                                            static_cast<py::ssize_t>(sizeof(double))},
                             m->data(), owner);
}

// A matrix as a new array (the library's rows copied: the states and tangents are small next to a Jacobian).
py::array_t<double> to_array(const gradflow::Mat& m) {
  py::array_t<double> a({static_cast<py::ssize_t>(m.rows()), static_cast<py::ssize_t>(m.cols())});
  std::copy(m.data(), m.data() + m.size(), a.mutable_data());
  return a;
}

// An (n, width) array (read by as_npy) as a matrix; Error naming it and the shape it must have.
gradflow::Mat to_mat(const std::shared_ptr<const gradflow::NpyArray>& a, const std::string& name, gradflow::Index n,
                     gradflow::Index width) {
  if (!a) throw Error(name + " is required; fix: pass an array of shape (" + std::to_string(n) + ", " +
                      std::to_string(width) + ")");
  const auto& sh = a->shape;
  if (sh[sh.size() - 2] != n || sh.back() != width)
    throw Error(name + " has shape (" + std::to_string(sh[sh.size() - 2]) + ", " + std::to_string(sh.back()) +
                "), the model's is (" + std::to_string(n) + ", " + std::to_string(width) + "); fix: pass an array of "
                "shape (" + std::to_string(n) + ", " + std::to_string(width) + ")");
  return gradflow::ConstMatMap(a->data.data(), n, width);
}

// The model's forward pass at x (None: x_0 drawn from the seed, as analyze does), then what `then` makes of it, on
// the interruptible worker (`then` must not touch Python objects).
template <class F>
auto with_forward(const std::vector<std::string>& args, const py::object& x, const std::string& function, F then) {
  gradflow::ModelSettings s = model_settings(args, function);
  attach_arrays(s, x, py::none());
  return interruptible([&s, &then] {
    const gradflow::RunConfig rc = gradflow::resolve(s);
    gradflow::Model model(rc.model);
    const gradflow::RunInputs in = gradflow::prepare_run(rc, model);
    return then(model, model.forward(in.x0));
  });
}

// Every state x_0 .. x_L and the output y.
std::pair<std::vector<py::array_t<double>>, py::array_t<double>> forward(const std::vector<std::string>& args,
                                                                         const py::object& x) {
  const gradflow::Trace t = with_forward(args, x, "Model.forward",
                                         [](const gradflow::Model&, gradflow::Trace&& trace) { return std::move(trace); });
  std::vector<py::array_t<double>> states;
  for (const auto& xl : t.x) states.push_back(to_array(xl));
  return {states, to_array(t.y)};
}

// P_lᵀ·u (the cotangent u of the output y back to x_l) or P_l·v (a tangent of x_l forward to y).
py::array_t<double> vjp_jvp(const std::vector<std::string>& args, const py::object& x, const py::object& w,
                            gradflow::Index layer, bool vjp) {
  const auto given = as_npy(w, vjp ? "g" : "v");  // read here, with the GIL; shaped against the model below
  return to_array(with_forward(args, x, vjp ? "Model.vjp" : "Model.jvp",
                               [&](const gradflow::Model& m, const gradflow::Trace& t) {
    if (layer < 0 || layer > m.layers())
      throw Error("layer " + std::to_string(layer) + " is not one of the model's states 0.." +
                  std::to_string(m.layers()) + "; fix: pass a layer l with 0 <= l <= " + std::to_string(m.layers()));
    const gradflow::Index n = t.y.rows();
    const gradflow::Mat in = vjp ? to_mat(given, "g", n, m.d_model()) : to_mat(given, "v", n, m.state_width());
    return vjp ? m.vjp_to(t, layer, in) : m.jvp_from(t, layer, in);
  }));
}

// compare | sweep | train-sweep: (the report as JSON, its long CSV).
std::pair<std::string, std::string> experiment(const std::string& command, const std::vector<std::string>& args,
                                               bool progress) {
  const std::string function = command == "train-sweep" ? "train_sweep" : command;
  // a plan is the command line's: its tasks run by `gradflow task`/`slurm` and its report by `merge`, so this call
  // would return no report (refused before anything is written)
  for (const std::string& a : args)
    if (a == "--plan")
      throw Error("gradflow." + function + "(plan=...) would write a plan of tasks and return no report; fix: write "
                  "plans with `gradflow " + command + " --plan DIR ...` in a shell, run them with `gradflow task`/`slurm` "
                  "and `gradflow merge`, and read the merged report's JSON (docs/cluster.md)");
  CLI::App app(command);
  const gradflow::ExperimentRun run = gradflow::add_experiment_command(app, command);
  parse(app, args, function);
  gradflow::SpecRun how;
  how.quiet = !progress;
  return interruptible([&run, &how, &function]() -> std::pair<std::string, std::string> {
    const gradflow::SpecOutcome out = run(how);
    if (out.report.is_null())
      throw Error("internal: gradflow." + function + "() ran without a report", gradflow::ErrorKind::Internal);
    // json= and csv= are written as the command writes --json and --csv (the table is the command line's)
    gradflow::ReportFiles files = out.files;
    files.table = false;
    std::ostringstream no_table;
    gradflow::write_report(out.report, out.writers, files, no_table);
    return {gradflow::json_text(out.report), out.writers.csv ? out.writers.csv(out.report) : std::string()};
  });
}

// gradflow train: (the report as JSON, its long CSV).
std::pair<std::string, std::string> train(const std::vector<std::string>& args, bool progress) {
  gradflow::TrainRequest r;
  CLI::App app("train");
  gradflow::add_train_options(app, r);
  parse(app, args, "train");
  gradflow::TrainConfig c = gradflow::resolve_train_request(app, r);
  c.progress = progress;
  return interruptible([&c]() -> std::pair<std::string, std::string> {
    const Json report = gradflow::train(c);
    return {gradflow::json_text(report), gradflow::train_csv(report)};
  });
}

}  // namespace

PYBIND11_MODULE(_gradflow, m) {
  m.doc() = "gradflow's native part; use the gradflow package (docs/python.md)";
  py::register_exception<Error>(m, "Error", PyExc_ValueError);
  m.attr("version") = GRADFLOW_VERSION;
  m.def("analyze", &analyze, py::arg("args"), py::arg("x"), py::arg("cotangent"), py::arg("progress"));
  m.def("check_model", &check_model, py::arg("args"));
  m.def("jacobian", &jacobian, py::arg("args"), py::arg("from_layer"), py::arg("to_layer"), py::arg("x"));
  m.def("experiment", &experiment, py::arg("command"), py::arg("args"), py::arg("progress"));
  m.def("train", &train, py::arg("args"), py::arg("progress"));
  m.def("blas_kernel", [] { return gradflow::blas_kernel(); });
  m.def("placement_display_name", &gradflow::placement_display_name, py::arg("name"));
  m.def("forward", &forward, py::arg("args"), py::arg("x"));
  m.def("vjp", [](const std::vector<std::string>& args, const py::object& x, const py::object& g, gradflow::Index l) {
    return vjp_jvp(args, x, g, l, true);
  });
  m.def("jvp", [](const std::vector<std::string>& args, const py::object& x, const py::object& v, gradflow::Index l) {
    return vjp_jvp(args, x, v, l, false);
  });
}
