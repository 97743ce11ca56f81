// llama.cpp's one-batch prompt processing, timed: the peer of `attn-viz model` in scripts/bench_llama_cpp.sh.
// Built by scripts/setup_llama_cpp.sh against the llama.h of the llama.cpp release whose prebuilt CPU
// libraries the npm package @node-llama-cpp/linux-x64 ships (never part of attn-viz's build).
//
// Loads a GGUF (CPU only, memory-mapped), makes one context with n_ctx >= T and n_batch = n_ubatch = T,
// flash attention off, and decodes one batch of T token ids: BOS, then fixed ids below the vocabulary
// (or the ids of --ids). No sampling. Prints one line of key=value fields on stdout:
//   llama_cpp_prompt tokens=T threads=N load_s=... decode_s=[first decode] decode_cpu_s=... best_decode_s=...
//   best_decode_cpu_s=... cpu_backend=[the ggml CPU variant loaded] weights_buffer=[llama.cpp's model buffers]
// (wall seconds, and the process's CPU seconds over the same call). --repeat R decodes the same batch R
// times (the memory cleared in between); best_ is the fastest by wall time.
// --cpu-backend NAME loads lib-dir/libggml-cpu-NAME.so (e.g. icelake: AVX-512 VNNI without AMX) instead.
// --logits-out F.npy writes every position's logits, float32 [T, vocab], for correctness checks; --kv-f32
// keeps K and V in float32 instead of llama.cpp's default float16.
//
// Usage: llama_cpp_prompt --lib-dir DIR --model F.gguf (--tokens T | --ids FILE) [--threads 2] [--repeat 1]
//                         [--cpu-backend NAME] [--logits-out F.npy] [--kv-f32] [--verbose]
#include <llama.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Options {
    std::string lib_dir, cpu_backend, model, ids_file, logits_out;
    int tokens = 0, threads = 2, repeat = 1;
    bool kv_f32 = false, verbose = false;
};

// What llama.cpp's log says about where the weights went: kept for the result line.
struct LogFacts {
    bool verbose = false;
    std::string cpu_backend, weights_buffer;
};

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--verbose") {
            o.verbose = true;
            continue;
        }
        if (arg == "--kv-f32") {
            o.kv_f32 = true;
            continue;
        }
        if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
        const std::string value = argv[++i];
        if (arg == "--lib-dir")
            o.lib_dir = value;
        else if (arg == "--cpu-backend")
            o.cpu_backend = value;
        else if (arg == "--model")
            o.model = value;
        else if (arg == "--ids")
            o.ids_file = value;
        else if (arg == "--logits-out")
            o.logits_out = value;
        else if (arg == "--tokens")
            o.tokens = std::stoi(value);
        else if (arg == "--threads")
            o.threads = std::stoi(value);
        else if (arg == "--repeat")
            o.repeat = std::stoi(value);
        else
            throw std::runtime_error("unknown option " + arg);
    }
    if (o.lib_dir.empty() || o.model.empty()) throw std::runtime_error("--lib-dir and --model are required");
    if ((o.tokens > 0) == !o.ids_file.empty())
        throw std::runtime_error("give one of --tokens T (T > 0) and --ids FILE");
    if (o.threads < 1 || o.repeat < 1) throw std::runtime_error("--threads and --repeat must be positive");
    return o;
}

void on_log(ggml_log_level level, const char* text, void* user_data) {
    auto& facts = *static_cast<LogFacts*>(user_data);
    const std::string line = text;
    const auto value_after = [&](const std::string& marker) {
        std::string value = line.substr(line.find(marker) + marker.size());
        value.erase(value.find_last_not_of(" \n") + 1);
        return value;
    };
    if (line.find("loaded CPU backend from ") != std::string::npos)
        facts.cpu_backend = value_after("loaded CPU backend from ");
    if (line.find("model buffer size") != std::string::npos) {
        // e.g. "load_tensors:   CPU_REPACK model buffer size =  1234.56 MiB": kept as CPU_REPACK:1234.56MiB
        std::string entry = line.substr(line.find(':') + 1);
        entry.erase(0, entry.find_first_not_of(' '));
        const std::string name = entry.substr(0, entry.find(' '));
        std::string size = value_after("= ");
        size.erase(std::remove(size.begin(), size.end(), ' '), size.end());
        facts.weights_buffer += (facts.weights_buffer.empty() ? "" : ",") + name + ":" + size;
    }
    if (facts.verbose || level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

// The ids to decode: BOS, then a fixed spread of ids over the vocabulary (a multiplicative sequence).
std::vector<llama_token> fixed_ids(const llama_vocab* vocab, int count) {
    const int n_vocab = llama_vocab_n_tokens(vocab);
    std::vector<llama_token> ids(count);
    ids[0] = llama_vocab_bos(vocab);
    for (int i = 1; i < count; ++i) ids[i] = static_cast<llama_token>((3 + 7919LL * i) % n_vocab);
    return ids;
}

std::vector<llama_token> read_ids(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::vector<llama_token> ids;
    for (long long id; in >> id;) ids.push_back(static_cast<llama_token>(id));
    if (ids.empty()) throw std::runtime_error(path + " holds no token ids");
    return ids;
}

// logits: [T, vocab], row-major; written as a NumPy .npy file of little-endian float32.
void write_npy(const std::string& path, const float* logits, int rows, int cols) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                         std::to_string(cols) + "), }";
    header.append(64 - (10 + header.size() + 1) % 64, ' ').push_back('\n');
    std::ofstream out(path, std::ios::binary);
    const unsigned short header_size = static_cast<unsigned short>(header.size());
    out.write("\x93NUMPY\x01\x00", 8);
    out.write(reinterpret_cast<const char*>(&header_size), 2);
    out << header;
    out.write(reinterpret_cast<const char*>(logits), static_cast<std::streamsize>(sizeof(float)) * rows * cols);
    if (!out) throw std::runtime_error("cannot write " + path);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

int run(const Options& o) {
    LogFacts facts;
    facts.verbose = o.verbose;
    llama_log_set(on_log, &facts);

    // Load the CPU backend variant ggml scores best for this CPU from the package's libraries, or the one asked for.
    if (o.cpu_backend.empty())
        ggml_backend_load_all_from_path(o.lib_dir.c_str());
    else if (ggml_backend_load((o.lib_dir + "/libggml-cpu-" + o.cpu_backend + ".so").c_str()) == nullptr)
        throw std::runtime_error("cannot load the CPU backend " + o.cpu_backend);
    llama_backend_init();

    // Load the model: CPU only, memory-mapped, llama.cpp's default weight repacking.
    const auto load_start = std::chrono::steady_clock::now();
    llama_model_params model_params = llama_model_default_params();
    model_params.n_gpu_layers = 0;
    model_params.load_mode = LLAMA_LOAD_MODE_MMAP;
    llama_model* model = llama_model_load_from_file(o.model.c_str(), model_params);
    if (model == nullptr) throw std::runtime_error("llama.cpp cannot load " + o.model);
    const llama_vocab* vocab = llama_model_get_vocab(model);
    std::vector<llama_token> ids = o.ids_file.empty() ? fixed_ids(vocab, o.tokens) : read_ids(o.ids_file);
    const int T = static_cast<int>(ids.size());

    // One context holding the whole prompt as one batch and one micro-batch, flash attention off.
    llama_context_params context_params = llama_context_default_params();
    context_params.n_ctx = static_cast<uint32_t>(T);
    context_params.n_batch = static_cast<uint32_t>(T);
    context_params.n_ubatch = static_cast<uint32_t>(T);
    context_params.n_threads = o.threads;
    context_params.n_threads_batch = o.threads;
    context_params.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    if (o.kv_f32) context_params.type_k = context_params.type_v = GGML_TYPE_F32;
    llama_context* context = llama_init_from_model(model, context_params);
    if (context == nullptr)
        throw std::runtime_error("llama.cpp cannot make a context of " + std::to_string(T) + " tokens");
    const double load_seconds = seconds_since(load_start);

    // Decode the batch R times; only the logits of the last position, unless all are asked for.
    llama_batch batch = llama_batch_init(T, 0, 1);
    batch.n_tokens = T;
    for (int i = 0; i < T; ++i) {
        batch.token[i] = ids[i];
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = !o.logits_out.empty() || i == T - 1;
    }
    std::vector<double> decode_seconds, decode_cpu_seconds;
    for (int r = 0; r < o.repeat; ++r) {
        llama_memory_clear(llama_get_memory(context), true);
        const double cpu_start = process_cpu_seconds();
        const auto start = std::chrono::steady_clock::now();
        const int status = llama_decode(context, batch);
        decode_seconds.push_back(seconds_since(start));
        decode_cpu_seconds.push_back(process_cpu_seconds() - cpu_start);
        if (status != 0) throw std::runtime_error("llama_decode returned " + std::to_string(status));
    }
    const auto best = std::min_element(decode_seconds.begin(), decode_seconds.end()) - decode_seconds.begin();
    if (!o.logits_out.empty()) write_npy(o.logits_out, llama_get_logits(context), T, llama_vocab_n_tokens(vocab));

    std::printf(
        "llama_cpp_prompt tokens=%d threads=%d load_s=%.3f decode_s=%.3f decode_cpu_s=%.3f best_decode_s=%.3f "
        "best_decode_cpu_s=%.3f cpu_backend=%s weights_buffer=%s\n",
        T, o.threads, load_seconds, decode_seconds.front(), decode_cpu_seconds.front(), decode_seconds[best],
        decode_cpu_seconds[best], facts.cpu_backend.empty() ? "unknown" : facts.cpu_backend.c_str(),
        facts.weights_buffer.empty() ? "unknown" : facts.weights_buffer.c_str());
    llama_batch_free(batch);
    llama_free(context);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(parse_options(argc, argv));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "llama_cpp_prompt: %s\n", e.what());
        return 1;
    }
}
