# The Python ctypes example of docs/app.md, run as written against the
# built libwstune, when python3 is found (the suite does not need Python).
find_program(WSTUNE_PYTHON3 python3)
if(WSTUNE_PYTHON3)
  add_test(NAME app.python_ctypes
           COMMAND sh -c "mkdir -p \"$2\" && awk '/^```python/{f=1;next} /^```/{f=0} f' \"$1\" > \"$2/ctypes_example.py\" && \
                          WSTUNE_DB=\"$2/ctypes.db\" \"$3\" \"$2/ctypes_example.py\""
                   sh ${PROJECT_SOURCE_DIR}/docs/app.md ${CMAKE_BINARY_DIR}/test-work ${WSTUNE_PYTHON3})
  set_tests_properties(app.python_ctypes PROPERTIES
    ENVIRONMENT "${WSTUNE_TEST_ENV};LIBWSTUNE=$<TARGET_FILE:wstune>" TIMEOUT 300
    PASS_REGULAR_EXPRESSION "answer from exact")
endif()
