# The API boundary of libwstune.so (issue 35): what the shared library
# exports is the app-facing API alone (tests/exports_test.sh says what it
# asserts).
add_test(NAME api.exports COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/exports_test.sh $<TARGET_FILE:wstune>
                                  ${PROJECT_SOURCE_DIR}/lib/include)
