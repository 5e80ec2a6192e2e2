# The Python ctypes example of docs/app.md, run as written against the
# built libwstune, when python3 is found (the suite does not need Python).
find_program(WSTUNE_PYTHON3 python3)
if(WSTUNE_PYTHON3)
  add_test(NAME app.python_ctypes
           COMMAND sh -c "mkdir -p \"$2\" && awk '/^```python/{f=1;next} /^```/{f=0} f' \"$1\" > \"$2/ctypes_example.py\" && \
                          WSTUNE_DB=\"$2/ctypes.db\" \"$3\" \"$2/ctypes_example.py\""
                   sh ${PROJECT_SOURCE_DIR}/docs/app.md ${CMAKE_BINARY_DIR}/test-work ${WSTUNE_PYTHON3})
  set(_py_env ${WSTUNE_TEST_ENV} "LIBWSTUNE=$<TARGET_FILE:wstune>")
  if(WSTUNE_SANITIZE)
    # An instrumented libwstune in a program that is not: its sanitizer
    # runtime must be loaded first.
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      set(_rt libclang_rt.asan-x86_64.so)
    else()
      set(_rt libasan.so)
    endif()
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_rt} OUTPUT_VARIABLE _rt_path
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND _py_env "LD_PRELOAD=${_rt_path}")
  endif()
  set_tests_properties(app.python_ctypes PROPERTIES
    ENVIRONMENT "${_py_env}" TIMEOUT 300
    PASS_REGULAR_EXPRESSION "answer from exact")
endif()
