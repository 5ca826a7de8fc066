# Enforced layers (docs/architecture.md, "Rooms"): a room's sources and headers see only the headers
# of the rooms below it. Each room compiles against a generated include folder ("view") that holds
# links to exactly the headers it may include, never the source tree's root, so a forbidden include
# (say cost_models/ including hardware_db/database.hpp) fails to compile.
#
#   llmsim_room_view(NAME ENTRIES...)  creates ${CMAKE_BINARY_DIR}/views/NAME with a link per entry
#                                       (a folder or a header, relative to the source root).
function(llmsim_room_view name)
  set(view ${CMAKE_BINARY_DIR}/views/${name})
  file(REMOVE_RECURSE ${view})
  foreach(entry ${ARGN})
    get_filename_component(parent ${view}/${entry} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${entry} ${view}/${entry} SYMBOLIC)
  endforeach()
  set(LLMSIM_VIEW_${name} ${view} PARENT_SCOPE)
endfunction()

# The plain-struct headers every model room reads (no JSON, no database).
set(LLMSIM_SPEC_HEADERS schedules hardware_db/specs.hpp hardware_db/units.hpp hardware_db/errors.hpp
    hardware_db/layout_rules.hpp hardware_db/validation_case.hpp hardware_db/limits.hpp)
