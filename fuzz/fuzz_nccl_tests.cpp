// The nccl-tests reader (text logs and -J JSON) on arbitrary bytes: every row it returns holds finite
// figures >= 0, or the log is refused.
#include <cmath>

#include "calibrate/nccl_tests.hpp"
#include "fuzz/fuzz_common.hpp"
#include "hardware_db/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace llmsim;
    try {
        const auto f = calibrate::parse_nccl_tests(fuzz::text_of(data, size), "fuzz_all_reduce.log");
        for (const auto& t : f.tests) {
            FUZZ_CHECK(!t.rows.empty());
            for (const auto& r : t.rows) {
                FUZZ_CHECK(r.size_bytes >= 0 && r.count >= 0);
                for (const auto* h : {&r.out_of_place, &r.in_place}) {
                    if (!h->present) continue;
                    for (double v : {h->time_us, h->algbw_GBps, h->busbw_GBps}) FUZZ_CHECK(std::isfinite(v) && v >= 0);
                    if (h->wrong) FUZZ_CHECK(std::isfinite(*h->wrong) && *h->wrong >= 0);
                }
            }
            (void)calibrate::to_json(t).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        }
    } catch (const ConfigError& e) {
        FUZZ_CHECK(!e.problems().empty());
    }
    return 0;
}
