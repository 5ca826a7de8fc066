// llmsim-probe: microbenchmarks of one GPU node (HBM, launch, GEMMs through cuBLASLt, PCIe, NCCL)
// written as ONE raw JSON file that `llmsim calibrate fit` turns into a profile.
// Depends on the CUDA runtime, cuBLASLt and NCCL only (and MPI with -DLLMSIM_PROBE_MPI); the JSON
// is written by hand. Every measurement: warm-up, repetitions timed with CUDA events, the median.
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace probe {

// ------------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------------

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string cuda_error_text(cudaError_t e, const char* what, const char* file, int line);

#define PROBE_CUDA(call)                                                                         \
    do {                                                                                         \
        cudaError_t probe_e_ = (call);                                                           \
        if (probe_e_ != cudaSuccess)                                                             \
            throw ::probe::Error(::probe::cuda_error_text(probe_e_, #call, __FILE__, __LINE__)); \
    } while (0)

// ------------------------------------------------------------------------------------------------
// Hand-written JSON (no library on a bare node)
// ------------------------------------------------------------------------------------------------

class Json {
public:
    Json& begin_object();
    Json& end_object();
    Json& begin_array();
    Json& end_array();
    Json& key(const std::string& k);
    Json& str(const std::string& v);
    Json& num(double v);
    Json& integer(long long v);
    Json& boolean(bool v);
    Json& null();
    // key + value shorthands
    Json& kv(const std::string& k, const std::string& v) { return key(k).str(v); }
    Json& kv(const std::string& k, const char* v) { return key(k).str(v); }
    Json& kv(const std::string& k, double v) { return key(k).num(v); }
    Json& kv(const std::string& k, int v) { return key(k).integer(v); }
    Json& kv(const std::string& k, long v) { return key(k).integer(v); }
    Json& kv(const std::string& k, long long v) { return key(k).integer(v); }
    Json& kv(const std::string& k, bool v) { return key(k).boolean(v); }
    // A complete JSON value written by another Json (spliced as is).
    Json& raw(const std::string& value);
    const std::string& text() const { return s_; }

private:
    Json& close(char c);
    void value_prefix();
    void newline();
    std::string s_;
    std::vector<bool> has_items_;   // per open container
    bool after_key_ = false;
};

std::string escape(const std::string& s);

// ------------------------------------------------------------------------------------------------
// Options and the collected results
// ------------------------------------------------------------------------------------------------

struct Options {
    std::string out;
    bool quick = false;
    std::vector<std::string> only;     // empty = everything
    std::string id_file;               // multi-process NCCL: shared file for the unique id
    long long max_bytes = 1LL << 30;   // NCCL sweep upper bound (1 GiB)
    int device = 0;                    // single-process: GPU for the non-NCCL benchmarks
    std::string command;
    bool wants(const std::string& what) const;
};

// One process among many (torchrun, srun, mpirun): from MPI or the environment.
struct World {
    bool multi = false;
    int rank = 0, world_size = 1, local_rank = 0;
    std::string source;   // "mpi" | "env:RANK" | "env:SLURM_PROCID" | ...
};

World detect_world(int* argc, char*** argv);
void finalize_world(const World& w);
// MPI broadcast of a blob from rank 0 (only when built with LLMSIM_PROBE_MPI); false otherwise.
bool world_bcast(const World& w, void* data, int bytes);
bool world_has_mpi();

struct Notes {
    std::vector<std::string> items;
    void add(const std::string& s) {
        items.push_back(s);
        std::fprintf(stderr, "llmsim-probe: note: %s\n", s.c_str());
    }
};

// ------------------------------------------------------------------------------------------------
// Timing helpers
// ------------------------------------------------------------------------------------------------

double median(std::vector<double> v);
// Repetition counts for the current mode.
struct Reps {
    int warmup = 5;
    int reps = 20;
};
inline Reps reps_for(bool quick) { return quick ? Reps{2, 5} : Reps{5, 20}; }

// Times fn() (which enqueues work on `stream`): `warmup` untimed calls, then `reps` samples of
// `inner` calls between two CUDA events. Returns per-call times in microseconds.
template <class F>
std::vector<double> time_events(cudaStream_t stream, const Reps& r, int inner, F&& fn) {
    cudaEvent_t a, b;
    PROBE_CUDA(cudaEventCreate(&a));
    PROBE_CUDA(cudaEventCreate(&b));
    for (int i = 0; i < r.warmup; ++i) fn();
    PROBE_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> out;
    for (int s = 0; s < r.reps; ++s) {
        PROBE_CUDA(cudaEventRecord(a, stream));
        for (int i = 0; i < inner; ++i) fn();
        PROBE_CUDA(cudaEventRecord(b, stream));
        PROBE_CUDA(cudaEventSynchronize(b));
        float ms = 0;
        PROBE_CUDA(cudaEventElapsedTime(&ms, a, b));
        out.push_back(1e3 * ms / inner);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return out;
}

// Calls per sample so that one sample lasts about target_us (1..cap).
int inner_for(double estimate_us, double target_us = 200.0, int cap = 200);

// ------------------------------------------------------------------------------------------------
// Benchmarks: each writes one JSON value (an array or object) into its Json; the caller adds the key
// ------------------------------------------------------------------------------------------------

void bench_hbm(Json& j, int device, const Options& o, Notes& notes);
void bench_launch(Json& j, int device, const Options& o, Notes& notes);
void bench_pcie(Json& j, int device, const Options& o, Notes& notes);
// GEMM sweep through cuBLASLt; `peak` gets the largest square GEMM of each precision.
void bench_gemm(Json& peak, Json& gemm, int device, const Options& o, Notes& notes);
// NCCL among all local GPUs of this process (single-process mode): writes the "nccl" array.
void bench_nccl_local(Json& j, const Options& o, Notes& notes);
// NCCL with one process per GPU; rank 0 writes the "nccl" array, others write nothing.
// Fills hosts/nodes for the "world" object.
struct MultiInfo {
    std::vector<std::string> hosts;   // per rank
    int nodes = 1;
    int gpus_per_node = 1;
};
void bench_nccl_multi(Json* j, const World& w, const Options& o, Notes& notes, MultiInfo& info);

std::string hostname();

}   // namespace probe
