// interrupt.hpp — Ctrl-C (SIGINT) and SIGTERM: one line on stderr saying what was kept and how to continue, the
// temporary files of writes in progress removed (io/pending_temp_files.hpp), exit code 130 (SIGINT) or 143
// (SIGTERM), as a shell reports a process killed by them. Outputs are written atomically at the end, so an
// interrupted command never leaves a half-written one. Part of each program, not of the library.
#pragma once
#include <string>

namespace gradflow::process {

// Installs the handlers (not for a signal the process inherited as ignored: it stays ignored); the note starts as
// "nothing was written".
void install_interrupt_handler();

// What an interrupt now keeps and how to continue, e.g. "finished configurations are kept in DIR; rerun the same
// command to continue". Call it before the long work starts (not from a signal handler).
void set_interrupt_note(const std::string& note);
// A second sentence from an enclosing command (`gradflow run` of several specs: which reports are done), printed
// after the note; "" for none.
void set_interrupt_context(const std::string& context);

}  // namespace gradflow::process
