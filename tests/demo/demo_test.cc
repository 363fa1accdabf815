// The demo reproduces the seed notebook: NumPy's legacy RandomState bit for
// bit, and every printed number of the attention map and the three tables to
// the notebook's digits (expected values: tools/gen/demo_expected.py).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "demo/heatmap.h"
#include "demo/notebook.h"
#include "demo/random_state.h"
#include "demo_expected.h"
#include "tatest.h"

namespace {

const tinyattn_demo::Notebook& notebook() {
  static const tinyattn_demo::Notebook nb = tinyattn_demo::run_notebook();
  return nb;
}

std::string printed(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size())) ++n;
  return n;
}

void check_table(const tinyattn_demo::Table& t, size_t rows, size_t cols, const char* const* want, const char* what) {
  TA_CHECK_MSG(t.rows.size() == rows, "%s: %zu rows", what, t.rows.size());
  for (size_t r = 0; r < rows && r < t.rows.size(); ++r) {
    TA_CHECK_MSG(t.rows[r].cells.size() == cols, "%s row %zu: %zu cells", what, r, t.rows[r].cells.size());
    for (size_t c = 0; c < cols && c < t.rows[r].cells.size(); ++c)
      TA_CHECK_MSG(t.rows[r].cells[c] == want[r * cols + c], "%s row %zu col %zu: '%s', the notebook prints '%s'", what, r,
                   c, t.rows[r].cells[c].c_str(), want[r * cols + c]);
  }
}

}  // namespace

TA_CASE("demo: RandomState reproduces np.random.seed(1337); randn") {
  tinyattn_demo::RandomState rs(1337);
  for (int i = 0; i < 4; ++i) {
    const double g = rs.gauss();
    TA_CHECK_MSG(std::fabs(g - demo_expected::kFirstGauss1337[i]) <= 1e-15 * std::fabs(g), "draw %d: %.17g vs %.17g",
                 i, g, demo_expected::kFirstGauss1337[i]);
  }
  // Reseeding restarts the stream and drops the cached Gaussian.
  rs.gauss();
  rs.seed_with(1337);
  TA_CHECK(std::fabs(rs.gauss() - demo_expected::kFirstGauss1337[0]) <= 1e-15);
}

TA_CASE("demo: the notebook's synthetic embeddings") {
  const auto& e = notebook().map.embeddings;
  constexpr size_t n = sizeof demo_expected::kEmbeddings / sizeof(double);
  TA_CHECK(e.size() == n);
  size_t bad = 0;
  for (size_t i = 0; i < n && i < e.size(); ++i)
    if (std::fabs(e[i] - demo_expected::kEmbeddings[i]) > 1e-14) ++bad;
  TA_CHECK_MSG(bad == 0, "%zu of %zu embedding values differ from NumPy's", bad, n);
}

TA_CASE("demo: the self-attention map matches the notebook") {
  const tinyattn_demo::Notebook& nb = notebook();
  TA_CHECK_MSG(nb.ok, "%s", nb.error.c_str());
  const size_t n = demo_expected::kTokens;
  TA_CHECK(nb.map.tokens.size() == n);
  TA_CHECK(nb.map.weights.size() == n * n);
  if (nb.map.weights.size() != n * n) return;
  for (size_t i = 0; i < n; ++i) TA_CHECK(nb.map.tokens[i] == demo_expected::kTokenNames[i]);
  size_t digits = 0, far = 0;
  double worst = 0.0;
  for (size_t x = 0; x < n * n; ++x) {
    if (printed("%.2f", nb.map.weights[x]) != demo_expected::kAttentionPrinted[x]) ++digits;
    const double d = std::fabs(nb.map.weights[x] - demo_expected::kAttention[x]);
    worst = d > worst ? d : worst;
    if (d > 2e-6) ++far;
  }
  TA_CHECK_MSG(digits == 0, "%zu weights print differently from the notebook", digits);
  TA_CHECK_MSG(far == 0, "%zu weights off by more than 2e-6 (worst %g)", far, worst);
  // The pronoun attends to its antecedent more than to any other token but itself.
  const float* it = &nb.map.weights[7 * n];
  size_t best_other = 0;
  for (size_t j = 1; j < n; ++j)
    if (j != 7 && it[j] > it[best_other]) best_other = j;
  TA_CHECK_MSG(best_other == 1, "'it' attends most to '%s'", nb.map.tokens[best_other].c_str());
}

TA_CASE("demo: the softmax-saturation table matches the notebook") {
  const tinyattn_demo::Notebook& nb = notebook();
  constexpr size_t rows = sizeof demo_expected::kSaturation / sizeof demo_expected::kSaturation[0];
  const char* want[rows * 5];
  for (size_t r = 0; r < rows; ++r) {
    static char dk[rows][8];
    std::snprintf(dk[r], sizeof dk[r], "%d", demo_expected::kSaturation[r].dk);
    want[r * 5 + 0] = dk[r];
    want[r * 5 + 1] = demo_expected::kSaturation[r].scaled;
    want[r * 5 + 2] = demo_expected::kSaturation[r].unscaled;
    want[r * 5 + 3] = demo_expected::kSaturation[r].ratio;
    want[r * 5 + 4] = demo_expected::kSaturation[r].regime;
  }
  check_table(nb.saturation_table, rows, 5, want, "saturation");
  for (size_t r = 0; r < rows && r < nb.saturation.size(); ++r) {
    TA_CHECK(std::fabs(nb.saturation[r].scaled - demo_expected::kSaturation[r].scaled_value) < 1e-6);
    TA_CHECK(std::fabs(nb.saturation[r].unscaled - demo_expected::kSaturation[r].unscaled_value) < 1e-6);
  }
}

TA_CASE("demo: the properties table matches the notebook") {
  constexpr size_t rows = sizeof demo_expected::kProperties / sizeof demo_expected::kProperties[0];
  const char* want[rows * 5];
  for (size_t r = 0; r < rows; ++r) {
    const auto& p = demo_expected::kProperties[r];
    const char* cells[] = {p.property, p.theoretical, p.min, p.max, p.status};
    for (size_t c = 0; c < 5; ++c) want[r * 5 + c] = cells[c];
  }
  check_table(notebook().properties, rows, 5, want, "properties");
}

TA_CASE("demo: the disambiguation table matches the notebook") {
  constexpr size_t rows = sizeof demo_expected::kBank / sizeof demo_expected::kBank[0];
  const char* want[rows * 3];
  for (size_t r = 0; r < rows; ++r) {
    want[r * 3 + 0] = demo_expected::kBank[r].pair;
    want[r * 3 + 1] = demo_expected::kBank[r].cosine;
    want[r * 3 + 2] = demo_expected::kBank[r].meaning;
  }
  check_table(notebook().disambiguation, rows, 3, want, "disambiguation");
}

TA_CASE("demo: the heatmaps show every token and weight") {
  const tinyattn_demo::Notebook& nb = notebook();
  const size_t n = nb.map.tokens.size();
  const std::string svg = tinyattn_demo::heatmap_svg(nb.map.tokens, nb.map.weights, "map");
  TA_CHECK(svg.rfind("<?xml", 0) == 0);
  TA_CHECK(svg.size() > 8);
  TA_CHECK(svg.compare(svg.size() - 7, 7, "</svg>\n") == 0);
  TA_CHECK_MSG(count(svg, "<rect ") == n * n + 2, "%zu rects (cells + background + colour bar)", count(svg, "<rect "));
  TA_CHECK(count(svg, "<stop ") == 9);
  TA_CHECK(svg.find("Attention Weight") != std::string::npos);
  TA_CHECK(svg.find("didn&apos;t") != std::string::npos);  // labels are escaped
  TA_CHECK(svg.find(">0.38</text>") != std::string::npos);  // "was -> was", the largest weight
  for (size_t i = 0; i < n; ++i)
    TA_CHECK_MSG(count(svg, ">" + std::string(i == 2 ? "didn&apos;t" : nb.map.tokens[i]) + "</text>") >= 2,
                 "token %s is not on both axes", nb.map.tokens[i].c_str());
  const std::string term = tinyattn_demo::heatmap_terminal(nb.map.tokens, nb.map.weights, false);
  TA_CHECK(count(term, "\n") == n + 2);
  TA_CHECK_MSG(term.find(" 7  it") != std::string::npos && term.find("0.18  animal") != std::string::npos ? true : false,
               "the 'it' row should name 'animal':\n%s", term.substr(0, 200).c_str());
  TA_CHECK(term.find("\x1b[") == std::string::npos);
  TA_CHECK(tinyattn_demo::heatmap_terminal(nb.map.tokens, nb.map.weights, true).find("\x1b[38;2;") != std::string::npos);
}

TA_CASE("demo: the figure has both of the notebook's panels") {
  const tinyattn_demo::Notebook& nb = notebook();
  std::vector<tinyattn_demo::GradientPoint> points;
  for (const auto& r : nb.saturation) points.push_back({r.dk, r.scaled, r.unscaled});
  TA_CHECK(points.size() == 8);
  const std::string fig = tinyattn_demo::figure_svg(nb.map.tokens, nb.map.weights, points);
  TA_CHECK(fig.rfind("<?xml", 0) == 0);
  TA_CHECK(count(fig, "<?xml") == 1);
  TA_CHECK(count(fig, "<svg ") == 3);  // the figure and its two nested panels
  TA_CHECK(count(fig, "</svg>") == 3);
  TA_CHECK(count(fig, "<polyline ") == 2);
  TA_CHECK(count(fig, "<circle ") == 16);
  TA_CHECK(fig.find("Self-Attention Map") != std::string::npos);
  TA_CHECK(fig.find("Softmax Gradient Magnitude vs Key Dimension dk") != std::string::npos);
  TA_CHECK(fig.find("stroke-dasharray") != std::string::npos);  // the unscaled curve is dashed, as in the notebook
  // Hover values carry the table's digits.
  for (const auto& row : demo_expected::kSaturation)
    TA_CHECK_MSG(fig.find(std::string(": ") + row.unscaled + "</title>") != std::string::npos, "no point for dk %d",
                 row.dk);
}
