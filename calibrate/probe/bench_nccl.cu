// NCCL sweeps (all_reduce, all_gather, reduce_scatter, alltoall, sendrecv) over 8 B .. 1 GiB, in the
// conventions of nccl-tests: "size" is the total message (count x ranks x 4 B for all_gather,
// reduce_scatter and alltoall), algbw = size/time, busbw = algbw x factor(n).
// Single process: all local GPUs through ncclCommInitAll. Several processes: one GPU each, the
// unique id from MPI or through a shared file (--id-file).
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "probe.hpp"

namespace probe {

namespace {

#define PROBE_NCCL(call)                                                                           \
    do {                                                                                           \
        ncclResult_t probe_r_ = (call);                                                            \
        if (probe_r_ != ncclSuccess)                                                               \
            throw ::probe::Error(std::string(#call) + " failed: " + ncclGetErrorString(probe_r_)); \
    } while (0)

const char* const kCollectives[] = {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"};

double bus_factor(const std::string& c, int n) {
    if (c == "all_reduce") return 2.0 * (n - 1) / n;
    if (c == "sendrecv") return 1.0;
    return static_cast<double>(n - 1) / n;
}

std::vector<long long> sweep_sizes(const Options& o, long long max_bytes) {
    std::vector<long long> s;
    for (long long b = 8; b <= max_bytes; b <<= (o.quick ? 3 : 1)) s.push_back(b);
    return s;
}

// Elements per rank buffer for `size` bytes in nccl-tests' convention; 0 when the size is too small.
long long count_for(const std::string& c, long long size, int n) {
    if (c == "all_reduce" || c == "sendrecv") return size / 4;
    return size / (4LL * n);
}

long long reported_size(const std::string& c, long long count, int n) {
    if (c == "all_reduce" || c == "sendrecv") return count * 4;
    return count * 4LL * n;
}

// Enqueues one collective for one rank (inside a group).
void enqueue(const std::string& c, const float* send, float* recv, long long count, int rank, int n, ncclComm_t comm,
             cudaStream_t s) {
    const size_t cnt = static_cast<size_t>(count);
    if (c == "all_reduce") {
        PROBE_NCCL(ncclAllReduce(send, recv, cnt, ncclFloat, ncclSum, comm, s));
    } else if (c == "all_gather") {
        PROBE_NCCL(ncclAllGather(send, recv, cnt, ncclFloat, comm, s));
    } else if (c == "reduce_scatter") {
        PROBE_NCCL(ncclReduceScatter(send, recv, cnt, ncclFloat, ncclSum, comm, s));
    } else if (c == "alltoall") {
        for (int p = 0; p < n; ++p) {
            PROBE_NCCL(ncclSend(send + p * cnt, cnt, ncclFloat, p, comm, s));
            PROBE_NCCL(ncclRecv(recv + p * cnt, cnt, ncclFloat, p, comm, s));
        }
    } else {   // sendrecv: a ring
        PROBE_NCCL(ncclSend(send, cnt, ncclFloat, (rank + 1) % n, comm, s));
        PROBE_NCCL(ncclRecv(recv, cnt, ncclFloat, (rank + n - 1) % n, comm, s));
    }
}

struct Rank {
    int device = 0;
    int rank = 0;
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    float* send = nullptr;
    float* recv = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
};

// Runs `iters` back-to-back launches of a collective on every local rank; returns the slowest
// rank's time per launch (us).
double timed(std::vector<Rank>& ranks, const std::string& c, long long count, int n, int iters) {
    for (auto& r : ranks) {
        PROBE_CUDA(cudaSetDevice(r.device));
        PROBE_CUDA(cudaEventRecord(r.start, r.stream));
    }
    for (int i = 0; i < iters; ++i) {
        PROBE_NCCL(ncclGroupStart());
        for (auto& r : ranks) enqueue(c, r.send, r.recv, count, r.rank, n, r.comm, r.stream);
        PROBE_NCCL(ncclGroupEnd());
    }
    double worst = 0;
    for (auto& r : ranks) {
        PROBE_CUDA(cudaSetDevice(r.device));
        PROBE_CUDA(cudaEventRecord(r.stop, r.stream));
    }
    for (auto& r : ranks) {
        PROBE_CUDA(cudaSetDevice(r.device));
        PROBE_CUDA(cudaEventSynchronize(r.stop));
        float ms = 0;
        PROBE_CUDA(cudaEventElapsedTime(&ms, r.start, r.stop));
        worst = std::max(worst, 1e3 * ms / iters);
    }
    return worst;
}

// Max over processes of a per-process time (multi-process mode); identity otherwise.
struct Reducer {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    double* dev = nullptr;
    double operator()(double v) const {
        if (!comm) return v;
        PROBE_CUDA(cudaMemcpyAsync(dev, &v, sizeof v, cudaMemcpyHostToDevice, stream));
        PROBE_NCCL(ncclAllReduce(dev, dev, 1, ncclDouble, ncclMax, comm, stream));
        double out = 0;
        PROBE_CUDA(cudaMemcpyAsync(&out, dev, sizeof out, cudaMemcpyDeviceToHost, stream));
        PROBE_CUDA(cudaStreamSynchronize(stream));
        return out;
    }
};

// The sweep; `j` may be null (ranks that do not write). nodes/gpn describe the placement.
void sweep(Json* j, std::vector<Rank>& ranks, int n, int nodes, int gpn, const Options& o, const Reducer& reduce,
           long long max_bytes) {
    const Reps reps = reps_for(o.quick);
    if (j) j->begin_array();
    for (const char* cname : kCollectives) {
        const std::string c = cname;
        if (j) {
            j->begin_object()
                .kv("collective", c)
                .kv("ranks", n)
                .kv("nodes", nodes)
                .kv("gpus_per_node", gpn)
                .kv("dtype", "float")
                .kv("reps", reps.reps);
            j->key("rows").begin_array();
        }
        if (ranks.front().rank == 0 || !reduce.comm)
            std::fprintf(stderr, "llmsim-probe: nccl %s on %d ranks\n", cname, n);
        for (long long size : sweep_sizes(o, max_bytes)) {
            const long long count = count_for(c, size, n);
            if (count == 0) continue;
            for (int w = 0; w < reps.warmup; ++w) timed(ranks, c, count, n, 1);
            const double est = reduce(timed(ranks, c, count, n, 1));
            const int inner = inner_for(est, 1000.0, 100);
            std::vector<double> samples;
            for (int r = 0; r < reps.reps; ++r) samples.push_back(reduce(timed(ranks, c, count, n, inner)));
            const double t = median(samples);
            const long long rsize = reported_size(c, count, n);
            const double alg = static_cast<double>(rsize) / (t * 1e3);
            if (j)
                j->begin_object()
                    .kv("size_bytes", rsize)
                    .kv("count", count)
                    .kv("time_us", t)
                    .kv("algbw_GBps", alg)
                    .kv("busbw_GBps", alg * bus_factor(c, n))
                    .end_object();
        }
        if (j) j->end_array().end_object();
    }
    if (j) j->end_array();
}

long long cap_bytes(const Options& o, int device) {
    PROBE_CUDA(cudaSetDevice(device));
    size_t free_b = 0, total_b = 0;
    PROBE_CUDA(cudaMemGetInfo(&free_b, &total_b));
    long long cap = o.max_bytes;
    while (cap > 8 && static_cast<size_t>(cap) * 2 > free_b / 2) cap /= 2;
    return cap;
}

void alloc(Rank& r, long long bytes) {
    PROBE_CUDA(cudaSetDevice(r.device));
    PROBE_CUDA(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    PROBE_CUDA(cudaMalloc(&r.send, static_cast<size_t>(bytes)));
    PROBE_CUDA(cudaMalloc(&r.recv, static_cast<size_t>(bytes)));
    PROBE_CUDA(cudaMemset(r.send, 0, static_cast<size_t>(bytes)));
    PROBE_CUDA(cudaMemset(r.recv, 0, static_cast<size_t>(bytes)));
    PROBE_CUDA(cudaEventCreate(&r.start));
    PROBE_CUDA(cudaEventCreate(&r.stop));
}

void release(Rank& r) {
    cudaSetDevice(r.device);
    if (r.comm) ncclCommDestroy(r.comm);
    if (r.start) cudaEventDestroy(r.start);
    if (r.stop) cudaEventDestroy(r.stop);
    if (r.send) cudaFree(r.send);
    if (r.recv) cudaFree(r.recv);
    if (r.stream) cudaStreamDestroy(r.stream);
    r = Rank{};
}

ncclUniqueId id_from_file(const World& w, const std::string& path) {
    ncclUniqueId id;
    if (w.rank == 0) {
        PROBE_NCCL(ncclGetUniqueId(&id));
        const std::string tmp = path + ".tmp." + std::to_string(getpid());
        {
            std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
            if (!f) throw Error("--id-file: cannot write " + tmp);
            f.write(reinterpret_cast<const char*>(&id), sizeof id);
            if (!f) throw Error("--id-file: cannot write " + tmp);
        }
        if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error("--id-file: cannot rename " + tmp + " to " + path);
        return id;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    while (std::chrono::steady_clock::now() < deadline) {
        struct stat st;
        if (stat(path.c_str(), &st) == 0 && static_cast<size_t>(st.st_size) == sizeof id) {
            std::ifstream f(path, std::ios::binary);
            if (f.read(reinterpret_cast<char*>(&id), sizeof id)) return id;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw Error("--id-file: " + path + " did not appear within 300 s (is it on a filesystem all ranks share?)");
}

}   // namespace

void bench_nccl_local(Json& j, const Options& o, Notes& notes) {
    int ndev = 0;
    PROBE_CUDA(cudaGetDeviceCount(&ndev));
    if (ndev < 2) {
        notes.add(
            "nccl: only one GPU visible to this process; NCCL sweeps need two or more (run one process per GPU "
            "across nodes for inter-node numbers); skipped");
        return;
    }
    std::vector<int> devs(ndev);
    for (int d = 0; d < ndev; ++d) devs[d] = d;
    std::vector<ncclComm_t> comms(ndev);
    PROBE_NCCL(ncclCommInitAll(comms.data(), ndev, devs.data()));
    long long max_bytes = o.max_bytes;
    for (int d = 0; d < ndev; ++d) max_bytes = std::min(max_bytes, cap_bytes(o, d));
    if (max_bytes < o.max_bytes)
        notes.add("nccl: largest message limited to " + std::to_string(max_bytes) + " bytes by free memory");
    std::vector<Rank> ranks(ndev);
    try {
        for (int d = 0; d < ndev; ++d) {
            ranks[d].device = d;
            ranks[d].rank = d;
            ranks[d].comm = comms[d];
            alloc(ranks[d], max_bytes);
        }
        sweep(&j, ranks, ndev, 1, ndev, o, Reducer{}, max_bytes);
    } catch (...) {
        for (auto& r : ranks) release(r);
        throw;
    }
    for (auto& r : ranks) release(r);
}

void bench_nccl_multi(Json* j, const World& w, const Options& o, Notes& notes, MultiInfo& info) {
    ncclUniqueId id{};
    const bool via_file = !world_has_mpi();
    if (!via_file) {
        if (w.rank == 0) PROBE_NCCL(ncclGetUniqueId(&id));
        world_bcast(w, &id, sizeof id);
    } else {
        if (o.id_file.empty())
            throw Error("multi-process run (" + w.source + ", world size " + std::to_string(w.world_size) +
                        ") needs --id-file PATH on a shared filesystem (or a build with -DLLMSIM_PROBE_MPI)");
        id = id_from_file(w, o.id_file);
    }
    Rank r;
    int ndev = 0;
    PROBE_CUDA(cudaGetDeviceCount(&ndev));
    r.device = w.local_rank % ndev;
    r.rank = w.rank;
    PROBE_CUDA(cudaSetDevice(r.device));
    PROBE_NCCL(ncclCommInitRank(&r.comm, w.world_size, id, w.rank));
    try {
        // ncclCommInitRank returns once every rank has joined, so all have read the id file.
        if (w.rank == 0 && via_file) std::remove(o.id_file.c_str());
        // Host names of all ranks (all-gather of 64-byte names) -> nodes and GPUs per node.
        const int kName = 64;
        char* names = nullptr;
        PROBE_CUDA(cudaMalloc(&names, static_cast<size_t>(kName) * w.world_size));
        cudaStream_t s;
        PROBE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        char mine[kName] = {0};
        std::strncpy(mine, hostname().c_str(), kName - 1);
        PROBE_CUDA(cudaMemcpy(names + kName * w.rank, mine, kName, cudaMemcpyHostToDevice));
        PROBE_NCCL(ncclAllGather(names + kName * w.rank, names, kName, ncclChar, r.comm, s));
        std::vector<char> all(static_cast<size_t>(kName) * w.world_size);
        PROBE_CUDA(cudaMemcpyAsync(all.data(), names, all.size(), cudaMemcpyDeviceToHost, s));
        PROBE_CUDA(cudaStreamSynchronize(s));
        std::vector<std::string> distinct;
        info.hosts.clear();
        for (int i = 0; i < w.world_size; ++i) {
            std::string h(all.data() + kName * i, strnlen(all.data() + kName * i, kName));
            info.hosts.push_back(h);
            if (std::find(distinct.begin(), distinct.end(), h) == distinct.end()) distinct.push_back(h);
        }
        info.nodes = static_cast<int>(distinct.size());
        info.gpus_per_node = w.world_size % info.nodes == 0 ? w.world_size / info.nodes : 0;
        if (info.gpus_per_node == 0) notes.add("nccl: ranks are spread unevenly over the nodes");
        // Largest message: the minimum over ranks of what fits.
        Reducer red{r.comm, s, nullptr};
        PROBE_CUDA(cudaMalloc(&red.dev, sizeof(double)));
        const long long cap = static_cast<long long>(-red(-static_cast<double>(cap_bytes(o, r.device))));
        PROBE_CUDA(cudaSetDevice(r.device));
        alloc(r, cap);
        std::vector<Rank> ranks{r};
        sweep(j, ranks, w.world_size, info.nodes, info.gpus_per_node, o, red, cap);
        cudaFree(red.dev);
        cudaFree(names);
        cudaStreamDestroy(s);
        r = ranks.front();
    } catch (...) {
        release(r);
        throw;
    }
    release(r);
}

}   // namespace probe
