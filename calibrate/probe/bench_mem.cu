// HBM bandwidth (copy, triad), kernel launch overhead, pinned host<->device (PCIe) bandwidth.
#include <chrono>
#include <cstring>

#include "probe.hpp"

namespace probe {

namespace {

__global__ void fill_kernel(float4* a, size_t n, float v) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x)
        a[i] = make_float4(v, v + 1.0f, v + 2.0f, v + 3.0f);
}

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ b, size_t n) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x)
        b[i] = a[i];
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             float s, size_t n) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const float4 x = b[i], y = c[i];
        a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
    }
}

// Read: every element is loaded once; a per-thread sum is stored only when it is impossible (never)
// so the loads cannot be optimised away and nothing is written.
__global__ void read_kernel(const float4* __restrict__ a, size_t n, float4* sink) {
    float acc = 0.0f;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const float4 x = a[i];
        acc += x.x + x.y + x.z + x.w;
    }
    if (acc == -1.2345e-30f) sink[0] = make_float4(acc, acc, acc, acc);
}

__global__ void empty_kernel() {}

struct DeviceBuffer {
    void* p = nullptr;
    explicit DeviceBuffer(size_t bytes) { PROBE_CUDA(cudaMalloc(&p, bytes)); }
    ~DeviceBuffer() { cudaFree(p); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Stream {
    cudaStream_t s = nullptr;
    Stream() { PROBE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
    ~Stream() { cudaStreamDestroy(s); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
};

int sm_count(int device) {
    int sms = 0;
    PROBE_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
}

}   // namespace

void bench_hbm(Json& j, int device, const Options& o, Notes& notes) {
    PROBE_CUDA(cudaSetDevice(device));
    const Reps reps = reps_for(o.quick);
    size_t free_b = 0, total_b = 0;
    PROBE_CUDA(cudaMemGetInfo(&free_b, &total_b));
    // Three arrays for triad; keep a quarter of the free memory spare.
    size_t max_array = std::min<size_t>(size_t(1) << 30, (free_b / 4) & ~size_t(4095));
    std::vector<size_t> sizes;
    for (size_t s = size_t(1) << 20; s <= max_array; s <<= (o.quick ? 4 : 2)) sizes.push_back(s);
    if (sizes.empty() || sizes.back() != max_array) sizes.push_back(max_array);
    if (max_array < (size_t(1) << 30))
        notes.add("hbm: largest array limited to " + std::to_string(max_array) + " bytes by free memory");
    const int sms = sm_count(device);
    DeviceBuffer a(max_array), b(max_array), c(max_array);
    Stream st;
    const size_t n_all = max_array / sizeof(float4);
    fill_kernel<<<sms * 4, 256, 0, st.s>>>(static_cast<float4*>(a.p), n_all, 1.0f);
    fill_kernel<<<sms * 4, 256, 0, st.s>>>(static_cast<float4*>(b.p), n_all, 2.0f);
    fill_kernel<<<sms * 4, 256, 0, st.s>>>(static_cast<float4*>(c.p), n_all, 3.0f);
    PROBE_CUDA(cudaGetLastError());
    PROBE_CUDA(cudaStreamSynchronize(st.s));
    j.begin_array();
    for (const char* kernel : {"copy", "triad", "read", "write"}) {
        const bool triad = std::strcmp(kernel, "triad") == 0;
        const bool read = std::strcmp(kernel, "read") == 0;
        const bool write = std::strcmp(kernel, "write") == 0;
        for (size_t bytes : sizes) {
            const size_t n = bytes / sizeof(float4);
            const int blocks = static_cast<int>(std::min<size_t>((n + 255) / 256, static_cast<size_t>(sms) * 32));
            auto launch = [&] {
                if (read)
                    read_kernel<<<blocks, 256, 0, st.s>>>(static_cast<const float4*>(a.p), n,
                                                          static_cast<float4*>(c.p));
                else if (write)
                    fill_kernel<<<blocks, 256, 0, st.s>>>(static_cast<float4*>(b.p), n, 1.0f);
                else if (triad)
                    triad_kernel<<<blocks, 256, 0, st.s>>>(static_cast<float4*>(a.p), static_cast<const float4*>(b.p),
                                                           static_cast<const float4*>(c.p), 0.5f, n);
                else
                    copy_kernel<<<blocks, 256, 0, st.s>>>(static_cast<const float4*>(a.p), static_cast<float4*>(b.p),
                                                          n);
            };
            const double est = median(time_events(st.s, Reps{1, 3}, 1, launch));
            const int inner = inner_for(est, 500.0, 1000);
            PROBE_CUDA(cudaGetLastError());
            const double t = median(time_events(st.s, reps, inner, launch));
            const double moved = static_cast<double>(bytes) * (triad ? 3 : (read || write) ? 1 : 2);
            j.begin_object()
                .kv("kernel", kernel)
                .kv("bytes_per_array", static_cast<long long>(bytes))
                .kv("bytes_moved", moved)
                .kv("time_us", t)
                .kv("GBps", moved / (t * 1e3))
                .kv("reps", reps.reps)
                .kv("inner", inner)
                .end_object();
        }
    }
    j.end_array();
}

void bench_launch(Json& j, int device, const Options& o, Notes& notes) {
    (void)notes;
    PROBE_CUDA(cudaSetDevice(device));
    Stream st;
    const int samples = o.quick ? 10 : 50;
    const int per_sample = 100;
    // Back-to-back launches between two events: launch overhead as seen by a stream of kernels.
    const auto t = time_events(st.s, Reps{20, samples}, per_sample, [&] { empty_kernel<<<1, 32, 0, st.s>>>(); });
    PROBE_CUDA(cudaGetLastError());
    // Launch + synchronize round trip on the host clock (for reference).
    std::vector<double> rt;
    for (int i = 0; i < samples; ++i) {
        const auto a = std::chrono::steady_clock::now();
        empty_kernel<<<1, 32, 0, st.s>>>();
        PROBE_CUDA(cudaStreamSynchronize(st.s));
        const auto b = std::chrono::steady_clock::now();
        rt.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    }
    j.begin_object();
    j.kv("method", "100 back-to-back empty kernels between two CUDA events, per launch");
    j.key("samples_us").begin_array();
    for (double x : t) j.num(x);
    j.end_array();
    j.kv("median_us", median(t));
    j.key("sync_roundtrip_us").begin_array();
    for (double x : rt) j.num(x);
    j.end_array();
    j.kv("sync_roundtrip_median_us", median(rt));
    j.end_object();
}

void bench_pcie(Json& j, int device, const Options& o, Notes& notes) {
    PROBE_CUDA(cudaSetDevice(device));
    const Reps reps = reps_for(o.quick);
    const size_t max_bytes = o.quick ? (size_t(1) << 28) : (size_t(1) << 30);
    void* host = nullptr;
    if (cudaMallocHost(&host, max_bytes) != cudaSuccess) {
        cudaGetLastError();
        notes.add("pcie: cannot allocate " + std::to_string(max_bytes) + " bytes of pinned host memory; skipped");
        j.begin_array().end_array();
        return;
    }
    std::memset(host, 1, max_bytes);
    try {
        DeviceBuffer dev(max_bytes);
        Stream st;
        j.begin_array();
        for (const char* dir : {"h2d", "d2h"}) {
            const bool h2d = std::strcmp(dir, "h2d") == 0;
            for (size_t bytes = size_t(1) << 16; bytes <= max_bytes; bytes <<= (o.quick ? 4 : 2)) {
                auto copy = [&] {
                    if (h2d)
                        cudaMemcpyAsync(dev.p, host, bytes, cudaMemcpyHostToDevice, st.s);
                    else
                        cudaMemcpyAsync(host, dev.p, bytes, cudaMemcpyDeviceToHost, st.s);
                };
                const double est = median(time_events(st.s, Reps{1, 3}, 1, copy));
                const double t = median(time_events(st.s, reps, inner_for(est, 500.0, 200), copy));
                PROBE_CUDA(cudaGetLastError());
                j.begin_object()
                    .kv("direction", dir)
                    .kv("bytes", static_cast<long long>(bytes))
                    .kv("time_us", t)
                    .kv("GBps", static_cast<double>(bytes) / (t * 1e3))
                    .end_object();
            }
        }
        j.end_array();
    } catch (...) {
        cudaFreeHost(host);
        throw;
    }
    cudaFreeHost(host);
}

}   // namespace probe
