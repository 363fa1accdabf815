// The Unity reporter's fixture: one passing, one failing, one ignored case.
// tests/unity/expected_transcript.txt holds the exact lines this prints, line
// numbers included: edit both together.
#include "tatest.h"

TA_CASE("demo: passes") { TA_CHECK(2 + 2 == 4); }

TA_CASE("demo: fails on purpose") {
  const int three = 3;
  TA_CHECK_MSG(1 + 1 == three, "one plus one is %d", 1 + 1);
  TA_CHECK(three == 4);  // a later failure: Unity reports only the first
}

TA_CASE("demo: is ignored") { TA_IGNORE("not applicable on this target"); }
