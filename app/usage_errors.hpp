// Command-line mistakes in the documented one-line form, with what to do about them: a mistyped
// command or option gets the closest valid name, an option of another command says which
// commands take it, a missing required option says what it holds.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace attn_viz_cli {

// The message (without "attn-viz: error: ") for a failed parse of `args` (argv[1..]): an unknown
// command or option when there is one (it is usually what caused `error`), else `error`'s text
// on one line with the command's name and, for a missing option, its description.
std::string usage_error_message(const CLI::App& app, const std::vector<std::string>& args,
                                const CLI::ParseError& error);

// How the user typed the option `name` ("--checkpoint") of the command in `args`: the alias they
// used ("--model"), or `name` when they typed none of its names or the command has no such option.
std::string typed_option_name(const CLI::App& app, const std::vector<std::string>& args, const std::string& name);

// Whether the command in `args` takes the option `name`.
bool command_takes_option(const CLI::App& app, const std::vector<std::string>& args, const std::string& name);

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions of
// adjacent characters each cost 1.
size_t edit_distance(const std::string& a, const std::string& b);

// The candidate `name` was most likely meant as: the only one `name` is a prefix of, else the
// nearest by edit_distance when it is at most a third of the longer name (at least 1); "" when
// none is close.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace attn_viz_cli
