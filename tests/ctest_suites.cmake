# Each doctest suite runs as its own ctest entry, so a failure names its area and ctest can
# run suites side by side. A suite is `TEST_SUITE("name")` in a tests/test_*.cpp file.
set(ATTN_VIZ_SUITES unit cli python model render analysis formats reliability)
foreach(suite IN LISTS ATTN_VIZ_SUITES)
  add_test(NAME ${suite} COMMAND attn-viz-tests --test-suite=${suite} --no-intro)
endforeach()
# Test cases outside every named suite still run, under "other".
list(JOIN ATTN_VIZ_SUITES "," ATTN_VIZ_SUITES_CSV)
add_test(NAME other COMMAND attn-viz-tests --test-suite-exclude=${ATTN_VIZ_SUITES_CSV} --no-intro)
