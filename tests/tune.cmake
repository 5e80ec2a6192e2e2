# wstune tune into the store: a real SIGKILL mid-session, then a resume.
add_test(NAME cli.tune_resume COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tune_resume_test.sh $<TARGET_FILE:wstune_cli>)
set_tests_properties(cli.tune_resume PROPERTIES ENVIRONMENT "${WSTUNE_TEST_ENV}" TIMEOUT 300)
