/*
 * check.h: the assertions of the shared test code (scan_check.c, cpu_scenarios.c). In the
 * Criterion suites they are Criterion's; in the plain driver that the ThreadSanitizer
 * build runs (tsan_cpu.c; Criterion cannot start under TSan, Criterion issue #274) they
 * print the failure, and CHECK aborts.
 *
 *   CHECK(condition, format, ...)   fatal
 *   EXPECT(condition, format, ...)  counted, the test goes on
 *   CHECK_OK(h, call)               fatal unless the dlscan call succeeds
 *   TEST_LOG(format, ...)           informational
 */
#ifndef DLSCAN_TESTS_CHECK_H
#define DLSCAN_TESTS_CHECK_H

#ifdef TEST_WITH_CRITERION
#include <criterion/criterion.h>
#include <criterion/logging.h>
#define CHECK(condition, ...) cr_assert(condition, __VA_ARGS__)
#define EXPECT(condition, ...) cr_expect(condition, __VA_ARGS__)
#define TEST_LOG(...) cr_log_info(__VA_ARGS__)
#else
#include <stdio.h>
#include <stdlib.h>
/* Failed EXPECTs of the plain driver (tsan_cpu.c reads it). */
extern int test_expect_failures;
#define TEST_REPORT_(kind, ...)                                                                   \
    (fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, kind), fprintf(stderr, __VA_ARGS__),      \
     fputc('\n', stderr))
#define CHECK(condition, ...)                                                                     \
    do {                                                                                          \
        if (!(condition)) {                                                                       \
            TEST_REPORT_("check failed: " #condition, __VA_ARGS__);                               \
            abort();                                                                              \
        }                                                                                         \
    } while (0)
#define EXPECT(condition, ...)                                                                    \
    do {                                                                                          \
        if (!(condition)) {                                                                       \
            TEST_REPORT_("expectation failed: " #condition, __VA_ARGS__);                         \
            ++test_expect_failures;                                                               \
        }                                                                                         \
    } while (0)
#define TEST_LOG(...) (fprintf(stderr, "# "), fprintf(stderr, __VA_ARGS__), fputc('\n', stderr))
#endif

#define CHECK_OK(h, call)                                                                         \
    CHECK((call) == DLSCAN_SUCCESS, "%s: %s", #call, dlscan_last_error(h))

#endif /* DLSCAN_TESTS_CHECK_H */
