#include "usage_errors.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

#include <fmt/format.h>

namespace attn_viz_cli {
namespace {

std::vector<const CLI::App*> all_commands(const CLI::App& app) {
    return app.get_subcommands([](const CLI::App*) { return true; });
}

const CLI::App* find_command(const CLI::App& app, const std::string& name) {
    for (const CLI::App* command : all_commands(app))
        if (command->get_name() == name) return command;
    return nullptr;
}

// "--name" or "-n" of every named option of `command` (positional arguments have none).
std::vector<std::string> option_names(const CLI::App& command) {
    std::vector<std::string> names;
    for (const CLI::Option* option : command.get_options()) {
        for (const std::string& l : option->get_lnames()) names.push_back(fmt::format("--{}", l));
        for (const std::string& s : option->get_snames()) names.push_back(fmt::format("-{}", s));
    }
    return names;
}

// An argument that is an option's name (a value such as -1 or -0.5 is not).
bool looks_like_option(const std::string& arg) {
    if (arg.size() < 2 || arg[0] != '-' || arg == "--") return false;
    return !(std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
}

// "--name" of "--name=value", "-q" of "-qx" (a cluster of short flags starts with its first).
std::string option_of(const std::string& arg) {
    if (arg[1] != '-') return arg.substr(0, 2);
    return arg.substr(0, arg.find('='));
}

std::string unknown_option_message(const CLI::App& app, const CLI::App& command, const std::string& option) {
    const std::string message = fmt::format("{}: unknown option {}", command.get_name(), option);
    const std::string closest = closest_name(option, option_names(command));
    if (!closest.empty()) return fmt::format("{} (did you mean {}?)", message, closest);
    std::vector<std::string> owners;
    for (const CLI::App* other : all_commands(app))
        if (other->get_option_no_throw(option) != nullptr) owners.push_back(other->get_name());
    if (owners.empty()) return message;
    return fmt::format("{} (an option of {}; attn-viz {} --help lists its own)", message, fmt::join(owners, ", "),
                       command.get_name());
}

// The first unknown command or option in `args`, as a message; "" when every name is known.
std::string unknown_name_message(const CLI::App& app, const std::vector<std::string>& args) {
    const CLI::App* command = nullptr;
    for (const std::string& arg : args) {
        if (command == nullptr && !looks_like_option(arg)) {
            command = find_command(app, arg);
            if (command != nullptr) continue;
            std::vector<std::string> names;
            for (const CLI::App* c : all_commands(app)) names.push_back(c->get_name());
            const std::string closest = closest_name(arg, names);
            if (closest.empty()) return fmt::format("unknown command '{}'", arg);
            return fmt::format("unknown command '{}' (did you mean {}?)", arg, closest);
        }
        if (command != nullptr && looks_like_option(arg) && command->get_option_no_throw(option_of(arg)) == nullptr)
            return unknown_option_message(app, *command, option_of(arg));
    }
    return "";
}

// The name of the command in `args`, or "".
std::string command_name(const CLI::App& app, const std::vector<std::string>& args) {
    for (const std::string& arg : args)
        if (!looks_like_option(arg) && find_command(app, arg) != nullptr) return arg;
    return "";
}

// The spelling of `option`'s name the user typed in `args` (the first of its names found, e.g.
// --model for "--checkpoint,--model"); its first name when none is there.
std::string typed_name(const CLI::Option& option, const std::vector<std::string>& args) {
    for (const std::string& arg : args)
        if (looks_like_option(arg) && option.check_name(option_of(arg))) return option_of(arg);
    return option.get_name();
}

std::string one_line(std::string text) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

}  // namespace

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
    std::vector<std::string> extensions;
    for (const std::string& c : candidates)
        if (c.size() > name.size() && c.compare(0, name.size(), name) == 0 &&
            name.find_first_not_of('-') != std::string::npos)
            extensions.push_back(c);
    if (extensions.size() == 1) return extensions.front();
    std::string best;
    size_t best_distance = SIZE_MAX;
    for (const std::string& c : candidates) {
        const size_t distance = edit_distance(name, c);
        if (distance < best_distance) best = c, best_distance = distance;
    }
    const size_t allowed = std::max<size_t>(1, std::max(name.size(), best.size()) / 3);
    return best_distance <= allowed ? best : "";
}

std::string usage_error_message(const CLI::App& app, const std::vector<std::string>& args,
                                const CLI::ParseError& error) {
    const std::string unknown = unknown_name_message(app, args);
    if (!unknown.empty()) return unknown;
    const std::string name = command_name(app, args);
    std::string message = one_line(error.what());
    if (name.empty()) return fmt::format("{} (attn-viz --help lists the commands)", message);
    const CLI::App* command = find_command(app, name);
    // "--input is required": say what it holds.
    static const std::regex missing(R"(^(--?[A-Za-z0-9-]+) is required$)");
    // "--checkpoint: Path does not exist: m": CLI11 names an option by its first name; say the one typed.
    static const std::regex about_option(R"(^(--?[A-Za-z0-9-]+): )");
    std::smatch option;
    if (std::regex_match(message, option, missing)) {
        if (const CLI::Option* o = command->get_option_no_throw(option[1].str());
            o != nullptr && !o->get_description().empty())
            message += fmt::format(": {}", o->get_description());
    } else if (std::regex_search(message, option, about_option)) {
        if (const CLI::Option* o = command->get_option_no_throw(option[1].str()))
            message.replace(0, option[1].length(), typed_name(*o, args));
    }
    return fmt::format("{}: {} (attn-viz {} --help lists its options)", name, message, name);
}

namespace {

// The option `name` of the command in `args`, or null.
const CLI::Option* command_option(const CLI::App& app, const std::vector<std::string>& args, const std::string& name) {
    const CLI::App* command = find_command(app, command_name(app, args));
    return command == nullptr ? nullptr : command->get_option_no_throw(name);
}

}  // namespace

std::string typed_option_name(const CLI::App& app, const std::vector<std::string>& args, const std::string& name) {
    const CLI::Option* option = command_option(app, args, name);
    return option == nullptr ? name : typed_name(*option, args);
}

bool command_takes_option(const CLI::App& app, const std::vector<std::string>& args, const std::string& name) {
    return command_option(app, args, name) != nullptr;
}

}  // namespace attn_viz_cli
