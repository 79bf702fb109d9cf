# cmake -DBUILD=DIR -DSOURCE=DIR -DPREFIX=DIR -P install_test.cmake
# Installs BUILD into PREFIX and checks that the installed `argus kb` reads
# the KB of PREFIX/share/argus (not the source tree), from cwd=/, and that
# --data_dir and $ARGUS_DATA_DIR still choose another.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}): ${err}")
endif()
foreach(f bin/argus bin/argus-server bin/argus-worker bin/argus-verifier bin/argus-runner
          bin/argus-sdpa-baseline.py share/argus/docs/dsl.md share/argus/kb/templates/gemm_mma.json
          share/argus/kb/templates/gemm_mma.py share/argus/kb/techniques/tiling.json)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${PREFIX}/${f}")
  endif()
endforeach()

# Runs the installed `argus kb --json ARGS...` from / and sets `dir` and
# `templates` (the number of templates) in the caller.
function(list_kb)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env --unset=ARGUS_KB_DIR --unset=ARGUS_DATA_DIR ${ENV_EXTRA}
            ${PREFIX}/bin/argus kb --json ${ARGN}
    WORKING_DIRECTORY / RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "argus kb ${ARGN} failed (${rc}): ${err}")
  endif()
  string(JSON d GET "${out}" dir)
  string(JSON n LENGTH "${out}" templates)
  set(dir ${d} PARENT_SCOPE)
  set(templates ${n} PARENT_SCOPE)
endfunction()

file(GLOB kb_templates ${SOURCE}/kb/templates/*.json)
list(LENGTH kb_templates want)

list_kb()
if(NOT dir STREQUAL "${PREFIX}/share/argus/kb")
  message(FATAL_ERROR "the installed argus read the KB at ${dir}, not ${PREFIX}/share/argus/kb")
endif()
if(NOT templates EQUAL want)
  message(FATAL_ERROR "the installed KB lists ${templates} templates, the source tree ${want}")
endif()

list_kb(--data_dir=${SOURCE})
if(NOT dir STREQUAL "${SOURCE}/kb")
  message(FATAL_ERROR "--data_dir=${SOURCE}: argus read the KB at ${dir}")
endif()

set(ENV_EXTRA ARGUS_DATA_DIR=${SOURCE})
list_kb()
if(NOT dir STREQUAL "${SOURCE}/kb")
  message(FATAL_ERROR "ARGUS_DATA_DIR=${SOURCE}: argus read the KB at ${dir}")
endif()
message(STATUS "installed argus reads ${PREFIX}/share/argus/kb: ${templates} templates")
file(REMOVE_RECURSE ${PREFIX})
