# `cmake --install BUILD --prefix PREFIX`: the programs in PREFIX/bin (the
# runner's helper scripts beside argus-runner, where it looks for them) and
# the runtime data in PREFIX/share/argus: kb/ and docs/dsl.md, where DataDir()
# (base/data_dir.h) finds them from bin/../share/argus. See docs/deploy.md.

install(TARGETS argus argus-server argus-worker argus-verifier argus-runner argus-candidate
                argus-compile argus-dsl
        RUNTIME DESTINATION bin)
install(PROGRAMS gpu_worker/runner/sdpa_baseline.py DESTINATION bin RENAME argus-sdpa-baseline.py)
install(PROGRAMS gpu_worker/runner/moe_baseline.py DESTINATION bin RENAME argus-moe-baseline.py)
install(PROGRAMS gpu_worker/runner/torch_baseline.py DESTINATION bin RENAME argus-torch-baseline.py)
install(FILES gpu_worker/runner/helper_timing.py DESTINATION bin RENAME argus_helper_timing.py)
install(DIRECTORY kb/techniques kb/templates DESTINATION share/argus/kb)
install(FILES docs/dsl.md DESTINATION share/argus/docs)
