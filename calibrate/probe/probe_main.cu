// llmsim-probe entry point: options, world detection, system description, the benchmarks in turn,
// and the raw JSON file. See calibrate/probe/README.md and docs/calibration.md.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <cublasLt.h>
#include <nccl.h>

#include "probe.hpp"

#ifdef LLMSIM_PROBE_MPI
#include <mpi.h>
#endif

namespace probe {

#ifndef LLMSIM_PROBE_VERSION
#define LLMSIM_PROBE_VERSION "0.1.0"
#endif

std::string cuda_error_text(cudaError_t e, const char* what, const char* file, int line) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s failed: %s (%s) at %s:%d", what, cudaGetErrorName(e), cudaGetErrorString(e),
                  file, line);
    return buf;
}

// ------------------------------------------------------------------------------------------------
// JSON writer
// ------------------------------------------------------------------------------------------------

std::string escape(const std::string& s) {
    std::string o;
    for (unsigned char c : s) {
        switch (c) {
            case '"': o += "\\\""; break;
            case '\\': o += "\\\\"; break;
            case '\n': o += "\\n"; break;
            case '\t': o += "\\t"; break;
            case '\r': o += "\\r"; break;
            default:
                if (c < 0x20) {
                    char b[8];
                    std::snprintf(b, sizeof b, "\\u%04x", c);
                    o += b;
                } else {
                    o += static_cast<char>(c);
                }
        }
    }
    return o;
}

void Json::newline() {
    s_ += '\n';
    s_.append(2 * has_items_.size(), ' ');
}

void Json::value_prefix() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!has_items_.empty()) {
        if (has_items_.back()) s_ += ',';
        has_items_.back() = true;
        newline();
    }
}

Json& Json::begin_object() {
    value_prefix();
    s_ += '{';
    has_items_.push_back(false);
    return *this;
}

Json& Json::close(char c) {
    const bool items = has_items_.back();
    has_items_.pop_back();
    if (items) newline();
    s_ += c;
    return *this;
}

Json& Json::end_object() { return close('}'); }

Json& Json::raw(const std::string& value) {
    value_prefix();
    s_ += value;
    return *this;
}

Json& Json::begin_array() {
    value_prefix();
    s_ += '[';
    has_items_.push_back(false);
    return *this;
}

Json& Json::end_array() { return close(']'); }

Json& Json::key(const std::string& k) {
    value_prefix();
    s_ += '"' + escape(k) + "\": ";
    after_key_ = true;
    return *this;
}

Json& Json::str(const std::string& v) {
    value_prefix();
    s_ += '"' + escape(v) + '"';
    return *this;
}

Json& Json::num(double v) {
    value_prefix();
    if (!std::isfinite(v)) {
        s_ += "null";
        return *this;
    }
    char b[40];
    std::snprintf(b, sizeof b, "%.9g", v);
    s_ += b;
    return *this;
}

Json& Json::integer(long long v) {
    value_prefix();
    s_ += std::to_string(v);
    return *this;
}

Json& Json::boolean(bool v) {
    value_prefix();
    s_ += v ? "true" : "false";
    return *this;
}

Json& Json::null() {
    value_prefix();
    s_ += "null";
    return *this;
}

// ------------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------------

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int inner_for(double estimate_us, double target_us, int cap) {
    if (!(estimate_us > 0)) return 1;
    const int n = static_cast<int>(std::ceil(target_us / estimate_us));
    return std::max(1, std::min(cap, n));
}

bool Options::wants(const std::string& what) const {
    if (only.empty()) return true;
    return std::find(only.begin(), only.end(), what) != only.end();
}

std::string hostname() {
    char h[256] = {0};
    if (gethostname(h, sizeof h - 1) != 0) return "unknown";
    return h;
}

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::string version_string(int v, bool cuda) {
    char b[32];
    if (cuda)
        std::snprintf(b, sizeof b, "%d.%d", v / 1000, (v % 1000) / 10);
    else if (v >= 20900)
        std::snprintf(b, sizeof b, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
    else
        std::snprintf(b, sizeof b, "%d.%d.%d", v / 1000, (v / 100) % 10, v % 100);
    return b;
}

// Kernel driver version from /proc (no NVML on purpose).
std::string kernel_driver_version() {
    std::ifstream f("/proc/driver/nvidia/version");
    std::string line;
    if (!f || !std::getline(f, line)) return "";
    std::istringstream in(line);
    std::string tok, prev;
    while (in >> tok) {
        if (prev == "Module" && !tok.empty() && std::isdigit(static_cast<unsigned char>(tok[0]))) return tok;
        prev = tok;
    }
    // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build ..."
    std::istringstream in2(line);
    while (in2 >> tok)
        if (std::count(tok.begin(), tok.end(), '.') >= 1 && std::isdigit(static_cast<unsigned char>(tok[0])))
            return tok;
    return "";
}

std::string iso_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char b[32];
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return b;
}

void usage(std::FILE* f) {
    std::fprintf(f,
                 "usage: llmsim-probe [--out FILE] [--quick] [--only LIST] [--device N] [--max-bytes N]\n"
                 "                    [--id-file PATH]\n"
                 "  --out FILE       raw measurements (default llmsim-probe-<host>.json)\n"
                 "  --quick          fewer sizes, shapes and repetitions (about a minute)\n"
                 "  --only LIST      comma list of: hbm, launch, gemm, pcie, nccl (default: all)\n"
                 "  --device N       GPU for the single-GPU benchmarks (default 0)\n"
                 "  --max-bytes N    largest NCCL message (default 1073741824)\n"
                 "  --id-file PATH   multi-process NCCL without MPI: a path on a filesystem shared by all\n"
                 "                   ranks (fresh per job) through which rank 0 passes the NCCL unique id\n"
                 "One process: all benchmarks on --device, NCCL among all local GPUs (ncclCommInitAll).\n"
                 "Several processes (mpirun with -DLLMSIM_PROBE_MPI, or RANK/WORLD_SIZE/LOCAL_RANK, or\n"
                 "SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID): one GPU per process, NCCL across all of them;\n"
                 "rank 0 also runs the single-GPU benchmarks and writes the file.\n");
}

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(argv[i]);
    auto need = [&](int& i) -> std::string {
        if (i + 1 >= argc) throw Error(std::string("option ") + argv[i] + " needs a value");
        return argv[++i];
    };
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            usage(stdout);
            std::exit(0);
        } else if (a == "--version") {
            std::printf("llmsim-probe %s\n", LLMSIM_PROBE_VERSION);
            std::exit(0);
        } else if (a == "--out" || a == "-o") {
            o.out = need(i);
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--only") {
            std::string list = need(i);
            std::stringstream ss(list);
            std::string item;
            while (std::getline(ss, item, ',')) {
                if (item == "peak") item = "gemm";
                if (item != "hbm" && item != "launch" && item != "gemm" && item != "pcie" && item != "nccl")
                    throw Error("--only: unknown benchmark '" + item + "' (expected hbm, launch, gemm, pcie, nccl)");
                o.only.push_back(item);
            }
        } else if (a == "--id-file") {
            o.id_file = need(i);
        } else if (a == "--device") {
            o.device = std::atoi(need(i).c_str());
        } else if (a == "--max-bytes") {
            o.max_bytes = std::atoll(need(i).c_str());
            if (o.max_bytes < 8) throw Error("--max-bytes must be at least 8");
        } else {
            throw Error("unknown option '" + a + "' (see --help)");
        }
    }
    return o;
}

void write_gpus(Json& j) {
    int n = 0;
    PROBE_CUDA(cudaGetDeviceCount(&n));
    j.key("gpus").begin_array();
    for (int d = 0; d < n; ++d) {
        cudaDeviceProp p;
        PROBE_CUDA(cudaGetDeviceProperties(&p, d));
        char bus[64] = {0};
        cudaDeviceGetPCIBusId(bus, sizeof bus, d);
        char cc[16];
        std::snprintf(cc, sizeof cc, "%d.%d", p.major, p.minor);
        j.begin_object()
            .kv("index", d)
            .kv("name", p.name)
            .kv("sm_count", p.multiProcessorCount)
            .kv("compute_capability", cc)
            .kv("memory_bytes", static_cast<long long>(p.totalGlobalMem))
            .kv("l2_bytes", static_cast<long long>(p.l2CacheSize))
            .kv("pci_bus_id", bus)
            .end_object();
    }
    j.end_array();
}

}   // namespace

// ------------------------------------------------------------------------------------------------
// World detection
// ------------------------------------------------------------------------------------------------

World detect_world(int* argc, char*** argv) {
    World w;
#ifdef LLMSIM_PROBE_MPI
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w.world_size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &w.local_rank);
    MPI_Comm_free(&local);
    w.source = "mpi";
    w.multi = w.world_size > 1;
    return w;
#else
    (void)argc;
    (void)argv;
    struct Vars {
        const char *rank, *size, *local;
    };
    const Vars sets[] = {{"RANK", "WORLD_SIZE", "LOCAL_RANK"},
                         {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
                         {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
                         {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"}};
    for (const auto& s : sets) {
        const std::string r = env(s.rank), n = env(s.size);
        if (r.empty() || n.empty()) continue;
        w.rank = std::atoi(r.c_str());
        w.world_size = std::atoi(n.c_str());
        const std::string l = env(s.local);
        w.local_rank = l.empty() ? 0 : std::atoi(l.c_str());
        w.source = std::string("env:") + s.rank;
        w.multi = w.world_size > 1;
        break;
    }
    return w;
#endif
}

void finalize_world(const World& w) {
    (void)w;
#ifdef LLMSIM_PROBE_MPI
    MPI_Finalize();
#endif
}

bool world_has_mpi() {
#ifdef LLMSIM_PROBE_MPI
    return true;
#else
    return false;
#endif
}

bool world_bcast(const World& w, void* data, int bytes) {
#ifdef LLMSIM_PROBE_MPI
    (void)w;
    MPI_Bcast(data, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    return true;
#else
    (void)w;
    (void)data;
    (void)bytes;
    return false;
#endif
}

}   // namespace probe

// ------------------------------------------------------------------------------------------------
// main
// ------------------------------------------------------------------------------------------------

int main(int argc, char** argv) {
    using namespace probe;
    World world;
    try {
        Options o = parse_args(argc, argv);
        world = detect_world(&argc, &argv);
        int ngpu = 0;
        cudaError_t e = cudaGetDeviceCount(&ngpu);
        if (e != cudaSuccess || ngpu == 0) {
            std::fprintf(stderr,
                         "llmsim-probe: error: no CUDA GPU is visible (cudaGetDeviceCount: %s). Run it on a GPU node "
                         "(check nvidia-smi and CUDA_VISIBLE_DEVICES).\n",
                         e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
            finalize_world(world);
            return 1;
        }
        const Reps reps = reps_for(o.quick);
        if (world.multi) o.device = world.local_rank % ngpu;
        if (o.device < 0 || o.device >= ngpu)
            throw Error("--device " + std::to_string(o.device) + ": only " + std::to_string(ngpu) + " GPU(s) visible");
        if (o.out.empty()) o.out = "llmsim-probe-" + hostname() + ".json";
        const bool writer = !world.multi || world.rank == 0;
        Notes notes;

        Json j;
        j.begin_object();
        j.kv("llmsim_probe", 1).kv("probe_version", LLMSIM_PROBE_VERSION).kv("command", o.command);
        j.kv("host", hostname()).kv("date", iso_now());
        int rt = 0, drv = 0, nccl = 0;
        cudaRuntimeGetVersion(&rt);
        cudaDriverGetVersion(&drv);
        ncclGetVersion(&nccl);
        j.key("versions")
            .begin_object()
            .kv("cuda_runtime", version_string(rt, true))
            .kv("cuda_driver", version_string(drv, true))
            .kv("driver", kernel_driver_version())
            .kv("nccl", version_string(nccl, false))
            .kv("cublasLt", std::to_string(static_cast<long long>(cublasLtGetVersion())))
            .end_object();
        write_gpus(j);
        j.key("settings")
            .begin_object()
            .kv("quick", o.quick)
            .kv("device", o.device)
            .kv("max_bytes", o.max_bytes)
            .kv("warmup", reps.warmup)
            .kv("reps", reps.reps)
            .end_object();

        // NCCL first in multi-process mode (all ranks), then the single-GPU benchmarks on rank 0.
        Json nccl_json;
        MultiInfo mi;
        bool nccl_done = false;
        if (o.wants("nccl")) {
            try {
                if (world.multi) {
                    bench_nccl_multi(writer ? &nccl_json : nullptr, world, o, notes, mi);
                } else {
                    bench_nccl_local(nccl_json, o, notes);
                }
                nccl_done = true;
            } catch (const Error& err) {
                notes.add(std::string("nccl: ") + err.what());
            }
        }
        if (!writer) {
            finalize_world(world);
            return 0;
        }
        j.key("world").begin_object();
        j.kv("mode", world.multi ? "multi-process" : "single-process")
            .kv("rank", world.rank)
            .kv("world_size", world.world_size)
            .kv("local_gpus", ngpu)
            .kv("id_source", world.multi ? world.source : std::string("none"));
        if (world.multi) {
            j.kv("nodes", mi.nodes).kv("gpus_per_node", mi.gpus_per_node);
            j.key("hosts").begin_array();
            for (const auto& h : mi.hosts) j.str(h);
            j.end_array();
        } else {
            j.kv("nodes", 1).kv("gpus_per_node", ngpu);
            j.key("hosts").begin_array().str(hostname()).end_array();
        }
        j.end_object();

        PROBE_CUDA(cudaSetDevice(o.device));
        auto section = [&](const char* name, auto&& fn) {
            if (!o.wants(name)) return;
            std::fprintf(stderr, "llmsim-probe: %s ...\n", name);
            try {
                fn();
            } catch (const Error& err) {
                notes.add(std::string(name) + ": " + err.what());
                cudaGetLastError();
            }
        };
        // Each benchmark writes into its own buffer so that a failure leaves valid JSON.
        Json hbm, launch, peak, gemm, pcie;
        bool hbm_ok = false, launch_ok = false, gemm_ok = false, pcie_ok = false;
        section("hbm", [&] {
            bench_hbm(hbm, o.device, o, notes);
            hbm_ok = true;
        });
        section("launch", [&] {
            bench_launch(launch, o.device, o, notes);
            launch_ok = true;
        });
        section("gemm", [&] {
            bench_gemm(peak, gemm, o.device, o, notes);
            gemm_ok = true;
        });
        section("pcie", [&] {
            bench_pcie(pcie, o.device, o, notes);
            pcie_ok = true;
        });

        auto splice = [&](const char* key, const Json& part, bool ok) {
            if (!ok) return;
            j.key(key);
            j.raw(part.text());
        };
        splice("hbm", hbm, hbm_ok);
        splice("launch", launch, launch_ok);
        splice("peak", peak, gemm_ok);
        splice("gemm", gemm, gemm_ok);
        splice("pcie", pcie, pcie_ok);
        splice("nccl", nccl_json, nccl_done && !nccl_json.text().empty());
        j.key("notes").begin_array();
        for (const auto& n : notes.items) j.str(n);
        j.end_array();
        j.end_object();

        std::FILE* f = std::fopen(o.out.c_str(), "w");
        if (!f) throw Error("cannot write " + o.out + ": " + std::strerror(errno));
        std::fputs(j.text().c_str(), f);
        std::fputs("\n", f);
        std::fclose(f);
        std::fprintf(stderr, "llmsim-probe: wrote %s\n", o.out.c_str());
        finalize_world(world);
        return 0;
    } catch (const Error& err) {
        std::fprintf(stderr, "llmsim-probe: error: %s\n", err.what());
        return 1;
    }
}
