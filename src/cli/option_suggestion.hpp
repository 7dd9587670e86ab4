// option_suggestion.hpp — "did you mean --placements?" for an option the command does not take: the command's own
// long option nearest in spelling (a typo, or the other command's spelling of the same thing).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace gradflow::cli {

// For the subcommand argv[1] of `app`: the first "--name" of argv it does not take, and the long option of that
// subcommand nearest to it (at most two edits, and fewer than half its letters): "did you mean --placement?" (the
// bare text, no punctuation around it); "" when no argument is unknown or none is near.
std::string option_suggestion(const CLI::App& app, int argc, char** argv);

}  // namespace gradflow::cli
