// OpenCL error checking: names, codes and call text.
#include <gtest/gtest.h>

#include "wstune/error.hpp"
#include "wstune/types.hpp"

using namespace wstune;

TEST(ClErrorName, KnownCodes) {
  EXPECT_EQ(cl_error_name(CL_SUCCESS), "CL_SUCCESS");
  EXPECT_EQ(cl_error_name(-54), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_EQ(cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(cl_error_name(CL_BUILD_PROGRAM_FAILURE), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_EQ(cl_error_name(-72), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
  EXPECT_EQ(cl_error_name(-12345), "CL_UNKNOWN_ERROR");
}

TEST(ClErrorCheck, MacroRecordsCallCodeAndName) {
  auto fail = [] { return cl_int{CL_INVALID_WORK_GROUP_SIZE}; };
  try {
    WSTUNE_CL_CHECK(fail());
    FAIL() << "expected ClError";
  } catch (const ClError& e) {
    EXPECT_EQ(e.code(), -54);
    EXPECT_EQ(e.name(), "CL_INVALID_WORK_GROUP_SIZE");
    EXPECT_EQ(e.call(), "fail()");
    const std::string m = e.what();
    EXPECT_NE(m.find("CL_INVALID_WORK_GROUP_SIZE"), std::string::npos);
    EXPECT_NE(m.find("-54"), std::string::npos);
    EXPECT_NE(m.find("fail()"), std::string::npos);
  }
  EXPECT_NO_THROW(WSTUNE_CL_CHECK(cl_int{CL_SUCCESS}));
  EXPECT_NO_THROW(check_nothrow(CL_INVALID_VALUE, "clFoo"));
}

TEST(BuildErrorCarriesLog, Fields) {
  BuildError e("clBuildProgram(x.cl)", CL_BUILD_PROGRAM_FAILURE, "error: expected ';'");
  EXPECT_EQ(e.log(), "error: expected ';'");
  EXPECT_EQ(e.name(), "CL_BUILD_PROGRAM_FAILURE");
}

TEST(LocalSizeText, ParsesAndRejects) {
  EXPECT_FALSE(parse_local_size("null").has_value());
  EXPECT_EQ(parse_local_size("64"), (Extent{64, 1, 1}));
  EXPECT_EQ(parse_local_size("32,8"), (Extent{32, 8, 2}));
  EXPECT_EQ(parse_local_size("32x8"), (Extent{32, 8, 2}));
  EXPECT_EQ(to_string(parse_local_size("32,8")), "32x8");
  EXPECT_EQ(parse_local_size("8,4,2"), (Extent{8, 4, 2, 3}));
  EXPECT_EQ(to_string(parse_local_size("8x4x2")), "8x4x2");
  EXPECT_THROW((void)parse_local_size("8,4,2,1"), UsageError);
  EXPECT_EQ(to_string(LocalSize{}), "null");
  EXPECT_THROW((void)parse_local_size("0"), UsageError);
  EXPECT_THROW((void)parse_local_size("8,"), UsageError);
  EXPECT_THROW((void)parse_local_size("abc"), UsageError);
  EXPECT_THROW((void)parse_local_size("-4"), UsageError);
}

TEST(TrialStatusText, RoundTrip) {
  for (auto s : {TrialStatus::correct, TrialStatus::compile, TrialStatus::runtime, TrialStatus::constraints,
                 TrialStatus::correctness, TrialStatus::timeout}) {
    EXPECT_EQ(parse_trial_status(to_string(s)), s);
  }
  EXPECT_THROW((void)parse_trial_status("ok"), UsageError);
}
