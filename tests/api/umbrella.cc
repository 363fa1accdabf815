// tinyattn/tinyattn.h alone gives the whole public API: this file includes
// nothing else of the library (tests/api/suite.cmake also compiles every
// public header on its own, with only lib/include on the include path).
#include "tatest.h"
#include "tinyattn/tinyattn.h"

TA_CASE("api: the umbrella header declares every entry point") {
  // Each entry point is declared, links, and rejects empty arguments.
  using tinyattn::Status;
  const tinyattn::Dims none{};
  TA_CHECK(tinyattn::forward(none, {}, {}) != Status::kOk);
  TA_CHECK(tinyattn::backward(none, tinyattn::BackwardMode::kRecompute, {}, {}) != Status::kOk);
  TA_CHECK(tinyattn::forward_f16(none, {}, {}) != Status::kOk);
  TA_CHECK(tinyattn::forward_i8(none, {}, {}, {}) != Status::kOk);
  TA_CHECK(tinyattn::softmax(nullptr, nullptr, 0) != Status::kOk);
  TA_CHECK(tinyattn::softmax_vjp(nullptr, nullptr, nullptr, 0) != Status::kOk);
  TA_CHECK(tinyattn::softmax_rows(nullptr, nullptr, 0, 0, 0, 0) != Status::kOk);
  TA_CHECK(tinyattn::softmax_vjp_rows(nullptr, nullptr, nullptr, 0, 0, 0, 0, 0) != Status::kOk);
  TA_CHECK(tinyattn::effective_scale(tinyattn::Dims{1, 1, 4, 1, 1, 1}, {}) == 0.5f);
  TA_CHECK(tinyattn::port_name(tinyattn::default_port()) != nullptr);
  TA_CHECK(tinyattn::to_string(Status::kOk) != nullptr);

  static tinyattn::SelftestReport report;  // static: a large object, boards have small stacks
  TA_CHECK(tinyattn::selftest(&report) == Status::kOk);
  TA_CHECK(report.passed());
}
