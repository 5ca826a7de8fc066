// Batch runs at scale (docs/runs.md): a run file holds one scenario, a list ({"scenarios": [...]}) or a
// sweep (a scenario with "sweep": {"dotted.path": [values...]} for a cartesian product and/or "zip":
// {"path": [...], ...} for paired lists); it expands into numbered scenario documents, which a thread
// pool evaluates (an evaluator the caller supplies) into rows written in input order as JSON lines or
// CSV; a shard K/N keeps an exact slice of the rows, and merge() joins the shards' outputs back into
// the unsharded output byte for byte. Errors of one scenario stay in its row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "hardware_db/json_reader.hpp"

namespace llmsim::batch {

// One scenario of a run: its document after the sweep's values are set, the folder relative paths in it
// are read from, where it came from ("file.json#/scenarios/2", "file.json#/sweep/7"), and the values of
// the swept paths (an object: dotted path -> value).
struct Item {
    Json doc;
    std::string base_dir, origin;
    Json swept = Json::object();
};

// One dimension of a sweep: the paths it sets together (one path, or a zip's paths), one array of
// `size` values per path.
struct SweepDimension {
    std::vector<std::string> paths;
    std::vector<Json> values;
    std::size_t size = 0;
};

// The scenarios of a run, built when asked for (issue 34: a 24 KB sweep expanded to 3.9 GB before one
// shard ran): a list entry is held as its document, a sweep as its base document and value lists, and
// item i is the base with the i-th combination set. What a run holds is then the run files' documents
// (each at most limits::kJsonFileBytes, 64 MiB), 8 bytes per scenario of its shard (shard_indices) and
// the rows in flight, whatever the sweep's size.
class ItemList {
public:
    std::size_t size() const { return total_; }
    bool empty() const { return total_ == 0; }
    Item operator[](std::size_t i) const;   // built on demand; throws ConfigError when a path cannot be set
    // Whether any swept value is a number (run --plot's x axis).
    bool any_swept_number() const;

    class const_iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = Item;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = Item;
        const_iterator(const ItemList* l, std::size_t i) : l_(l), i_(i) {}
        Item operator*() const { return (*l_)[i_]; }
        const_iterator& operator++() {
            ++i_;
            return *this;
        }
        bool operator==(const const_iterator& o) const { return i_ == o.i_; }
        bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

    private:
        const ItemList* l_;
        std::size_t i_;
    };
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, total_}; }

    void add(Item it);
    void add_sweep(Json base, std::string base_dir, std::string origin, std::vector<SweepDimension> dims,
                   std::size_t count);

private:
    struct Source {
        Item single;                        // a list entry (dims empty)
        std::vector<SweepDimension> dims;   // a sweep: `single.doc` is its base, `single.origin` the file's
        std::size_t first = 0, count = 1;
    };
    std::vector<Source> sources_;
    std::size_t total_ = 0;
};

// Every scenario of a set of run files, in order (files in the order given; inside a file, list order;
// a sweep's points with its first path (alphabetically) varying slowest and the zip innermost).
struct Plan {
    ItemList items;
    std::vector<std::string> swept;   // the dotted paths a sweep sets, in first-seen order (CSV columns)
};

// The most scenarios one run may expand to: 2^22 (shard_indices holds 8 bytes for each, 32 MiB); a
// larger sweep is an input error (split it over files and shards).
inline constexpr std::size_t kMaxRunScenarios = std::size_t{1} << 22;

// Expands one run document (`origin` names it in errors and items). Throws ConfigError naming the JSON
// pointer when the file's structure is wrong (a sweep value that is not a non-empty array, zip lists of
// different lengths, a path through a non-object); a bad scenario inside is not checked here.
void expand(const Json& doc, const std::string& origin, const std::string& base_dir, Plan& plan);
// Reads and expands each file (all problems of all files in one ConfigError).
Plan expand_files(const std::vector<std::string>& files);

// Sets `value` at a dotted path ("parallel.tp"), creating objects on the way; throws ConfigError when a
// step of the path is not an object.
void set_path(Json& doc, const std::string& dotted, const Json& value, const std::string& origin);

// --shard K/N: slice K (1-based) of N. Contiguous slices are [total·(K-1)/N, total·K/N); strided ones
// hold the indices i with i mod N = K-1. Either way the N slices partition the indices exactly.
struct Shard {
    int k = 1, n = 1;
    bool strided = false;
};
Shard parse_shard(const std::string& text);   // "K/N"; ConfigError naming --shard otherwise
std::vector<std::size_t> shard_indices(std::size_t total, const Shard& s);

// What an evaluator returns for one scenario: the resolved scenario (defaults filled in) and its
// result; it throws (ConfigError or any std::exception) when the scenario is bad or cannot be estimated.
struct Outcome {
    Json scenario, result;
};
using Evaluator = std::function<Outcome(const Item&)>;

enum class Format { jsonl, csv };
Format format_of(const std::string& path);   // by extension: .csv, else JSON lines

// One output row.
struct Row {
    std::size_t index = 0, total = 0;
    std::shared_ptr<const Item> item;   // built for this row (ItemList builds items on demand)
    bool ok = false;
    Json scenario, result;   // scenario: resolved when ok, else the document as expanded
    std::string error;       // problems joined by "; " when not ok
};

// The CSV header (the same for every shard of a plan) and a row of it; a JSON line of a row.
// CSV columns: index, of, origin, ok, error, each swept path, the fixed result columns (kResultColumns),
// then the resolved scenario as JSON text.
std::string csv_header(const Plan& plan);
std::string csv_row(const Plan& plan, const Row& row);
std::string jsonl_row(const Row& row);
// The result keys (dotted into the result object) that CSV rows carry; an absent key is an empty cell.
extern const std::vector<std::string> kResultColumns;

struct RunOptions {
    int threads = 0;   // 0: std::thread::hardware_concurrency()
    Format format = Format::jsonl;
    std::function<void(double)> progress;   // fraction done, called from the calling thread
    // Called on the calling thread with each row, in index order, before it is written (text tables).
    std::function<void(const Row&)> on_row;
};

struct RunSummary {
    std::size_t rows = 0, failed = 0;
    unsigned threads_asked = 0, threads_started = 0;   // fewer started when the system refused a thread
    std::string thread_error;                          // why (empty when all started)
};

// Evaluates plan.items[indices[i]] on a pool of threads and writes one row per item to `out` in
// the order of `indices` (the CSV header first), as rows complete. Deterministic: the bytes written do
// not depend on the thread count.
RunSummary run(const Plan& plan, const std::vector<std::size_t>& indices, const Evaluator& evaluate,
               const RunOptions& options, std::ostream& out);

// Joins the outputs of the shards of one run (any order) into the unsharded output: rows sorted by
// index, one CSV header. Throws ConfigError when a row is missing or repeated, the pieces mix formats,
// or their CSV headers differ.
std::string merge(const std::vector<std::pair<std::string, std::string>>& pieces);   // (name, text)
// The same, streamed: piece i (named names[i]) is opened with open(i), twice (a first pass checks every
// piece, a second writes), so memory holds one row per piece, never a whole piece; nothing is written
// to `out` when a piece is bad. Rows must be in the order llmsim run writes them (increasing index).
void merge_files(const std::vector<std::string>& names,
                 const std::function<std::unique_ptr<std::istream>(std::size_t)>& open, std::ostream& out);
// The same, each line of the merged output (a CSV header, then the rows; no newline) given to `write`.
void merge_files(const std::vector<std::string>& names,
                 const std::function<std::unique_ptr<std::istream>(std::size_t)>& open,
                 const std::function<void(const std::string&)>& write);

}   // namespace llmsim::batch
