// Text renderings of search results (llmsim search, plan, scaling); their JSON: report/search.hpp.
#pragma once

#include <string>

#include "app/search/search.hpp"
#include "report/search.hpp"

namespace llmsim::cli {

using report::layout_brief;
using report::overlap_brief;
using report::search_entry_json;
using report::search_result_json;

std::string search_result_text(const Scenario& base, const search::SearchResult& r, const search::SearchOptions& o);

}   // namespace llmsim::cli
