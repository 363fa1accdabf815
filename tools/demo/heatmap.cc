#include "heatmap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tinyattn_demo {

namespace {

struct Rgb {
  double r, g, b;
};

// plotly's "Blues" colour scale (ColorBrewer), as the notebook's heatmap uses.
Rgb blues(double t) {
  static const Rgb stops[] = {{247, 251, 255}, {222, 235, 247}, {198, 219, 239}, {158, 202, 225}, {107, 174, 214},
                              {66, 146, 198},  {33, 113, 181},  {8, 81, 156},    {8, 48, 107}};
  t = std::min(1.0, std::max(0.0, t)) * 8.0;
  const int i = std::min(7, static_cast<int>(t));
  const double f = t - i;
  const Rgb a = stops[i], b = stops[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(c.r)), static_cast<int>(std::lround(c.g)),
                static_cast<int>(std::lround(c.b)));
  return buf;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string num(double x, const char* f = "%.2f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

}  // namespace

std::string heatmap_svg(const std::vector<std::string>& tokens, const std::vector<float>& weights,
                        const std::string& title) {
  const size_t n = tokens.size();
  const double cell = 48, left = 110, top = 70, bottom = 110, bar_gap = 30, bar_w = 20, right = 90;
  const double grid = cell * n;
  const double width = left + grid + bar_gap + bar_w + right, height = top + grid + bottom;
  const auto mm = std::minmax_element(weights.begin(), weights.end());
  const double lo = weights.empty() ? 0.0 : *mm.first, hi = weights.empty() ? 1.0 : *mm.second;
  const double span = hi > lo ? hi - lo : 1.0;

  std::string s;
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width, "%.0f") + "\" height=\"" +
       num(height, "%.0f") + "\" viewBox=\"0 0 " + num(width, "%.0f") + " " + num(height, "%.0f") +
       "\" font-family=\"Helvetica, Arial, sans-serif\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(width / 2, "%.0f") + "\" y=\"30\" font-size=\"16\" font-weight=\"bold\" text-anchor=\"middle\">" +
       xml_escape(title) + "</text>\n";
  // Cells: row i = query token i (top to bottom), column j = key token j.
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const double w = weights[i * n + j], t = (w - lo) / span;
      const double x = left + j * cell, y = top + i * cell;
      s += "<rect x=\"" + num(x, "%.0f") + "\" y=\"" + num(y, "%.0f") + "\" width=\"" + num(cell, "%.0f") +
           "\" height=\"" + num(cell, "%.0f") + "\" fill=\"" + hex(blues(t)) + "\"><title>" +
           xml_escape(tokens[i]) + " -> " + xml_escape(tokens[j]) + ": " + num(w, "%.4f") + "</title></rect>\n";
      s += "<text x=\"" + num(x + cell / 2, "%.1f") + "\" y=\"" + num(y + cell / 2 + 4, "%.1f") +
           "\" font-size=\"11\" text-anchor=\"middle\" fill=\"" + (t > 0.55 ? "white" : "#1f2937") + "\">" +
           num(w) + "</text>\n";
    }
  }
  // Axis labels: keys along the bottom (rotated), queries on the left.
  for (size_t k = 0; k < n; ++k) {
    const double cx = left + k * cell + cell / 2, cy = top + k * cell + cell / 2;
    s += "<text x=\"" + num(left - 8, "%.0f") + "\" y=\"" + num(cy + 4, "%.1f") +
         "\" font-size=\"13\" text-anchor=\"end\">" + xml_escape(tokens[k]) + "</text>\n";
    s += "<text x=\"" + num(cx, "%.1f") + "\" y=\"" + num(top + grid + 12, "%.0f") +
         "\" font-size=\"13\" text-anchor=\"end\" transform=\"rotate(-45 " + num(cx, "%.1f") + " " +
         num(top + grid + 12, "%.0f") + ")\">" + xml_escape(tokens[k]) + "</text>\n";
  }
  s += "<text x=\"" + num(left + grid / 2, "%.0f") + "\" y=\"" + num(top + grid + 80, "%.0f") +
       "\" font-size=\"13\" text-anchor=\"middle\">Key Token</text>\n";
  s += "<text x=\"20\" y=\"" + num(top + grid / 2, "%.0f") + "\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 20 " +
       num(top + grid / 2, "%.0f") + ")\">Query Token</text>\n";
  // Colour bar: a vertical gradient from lo (bottom) to hi (top) with five ticks.
  const double bx = left + grid + bar_gap;
  s += "<defs><linearGradient id=\"bar\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (int k = 0; k <= 8; ++k)
    s += "<stop offset=\"" + num(k / 8.0, "%.3f") + "\" stop-color=\"" + hex(blues(k / 8.0)) + "\"/>\n";
  s += "</linearGradient></defs>\n";
  s += "<rect x=\"" + num(bx, "%.0f") + "\" y=\"" + num(top, "%.0f") + "\" width=\"" + num(bar_w, "%.0f") +
       "\" height=\"" + num(grid, "%.0f") + "\" fill=\"url(#bar)\" stroke=\"#9ca3af\"/>\n";
  for (int k = 0; k <= 4; ++k) {
    const double v = lo + span * k / 4.0, y = top + grid - grid * k / 4.0;
    s += "<line x1=\"" + num(bx + bar_w, "%.0f") + "\" y1=\"" + num(y, "%.1f") + "\" x2=\"" + num(bx + bar_w + 5, "%.0f") +
         "\" y2=\"" + num(y, "%.1f") + "\" stroke=\"#374151\"/>\n";
    s += "<text x=\"" + num(bx + bar_w + 8, "%.0f") + "\" y=\"" + num(y + 4, "%.1f") + "\" font-size=\"11\">" +
         num(v, "%.3f") + "</text>\n";
  }
  s += "<text x=\"" + num(bx + bar_w / 2, "%.0f") + "\" y=\"" + num(top - 10, "%.0f") +
       "\" font-size=\"12\" text-anchor=\"middle\">Attention Weight</text>\n";
  s += "</svg>\n";
  return s;
}

std::string gradient_svg(const std::vector<GradientPoint>& points, const std::string& title) {
  const double left = 80, right = 30, top = 70, plot_w = 440, plot_h = 440, bottom = 130;
  const double width = left + plot_w + right, height = top + plot_h + bottom;
  const double y_max = 0.12;
  const double x_lo = points.empty() ? 1.0 : std::log2(static_cast<double>(points.front().dk));
  const double x_hi = points.empty() ? 2.0 : std::log2(static_cast<double>(points.back().dk));
  auto px = [&](int dk) {
    const double span = x_hi > x_lo ? x_hi - x_lo : 1.0;
    return left + 20 + (plot_w - 40) * (std::log2(static_cast<double>(dk)) - x_lo) / span;
  };
  auto py = [&](double v) { return top + plot_h * (1.0 - std::min(v, y_max) / y_max); };

  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width, "%.0f") + "\" height=\"" +
       num(height, "%.0f") + "\" viewBox=\"0 0 " + num(width, "%.0f") + " " + num(height, "%.0f") +
       "\" font-family=\"Helvetica, Arial, sans-serif\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(width / 2, "%.0f") + "\" y=\"30\" font-size=\"16\" font-weight=\"bold\" text-anchor=\"middle\">" +
       xml_escape(title) + "</text>\n";
  // Grid and y ticks every 0.02.
  for (int k = 0; k <= 6; ++k) {
    const double v = 0.02 * k, y = py(v);
    s += "<line x1=\"" + num(left, "%.0f") + "\" y1=\"" + num(y, "%.1f") + "\" x2=\"" + num(left + plot_w, "%.0f") +
         "\" y2=\"" + num(y, "%.1f") + "\" stroke=\"#e5e7eb\"/>\n";
    s += "<text x=\"" + num(left - 8, "%.0f") + "\" y=\"" + num(y + 4, "%.1f") + "\" font-size=\"11\" text-anchor=\"end\">" +
         num(v) + "</text>\n";
  }
  for (const GradientPoint& p : points) {
    const double x = px(p.dk);
    s += "<line x1=\"" + num(x, "%.1f") + "\" y1=\"" + num(top, "%.0f") + "\" x2=\"" + num(x, "%.1f") + "\" y2=\"" +
         num(top + plot_h, "%.0f") + "\" stroke=\"#f3f4f6\"/>\n";
    s += "<text x=\"" + num(x, "%.1f") + "\" y=\"" + num(top + plot_h + 18, "%.0f") +
         "\" font-size=\"11\" text-anchor=\"middle\">" + std::to_string(p.dk) + "</text>\n";
  }
  s += "<rect x=\"" + num(left, "%.0f") + "\" y=\"" + num(top, "%.0f") + "\" width=\"" + num(plot_w, "%.0f") +
       "\" height=\"" + num(plot_h, "%.0f") + "\" fill=\"none\" stroke=\"#9ca3af\"/>\n";
  // The two curves with markers (and the value on hover).
  struct Series {
    bool scaled;
    const char* colour;
    const char* dash;
    const char* name;
  };
  const Series series[] = {{true, "#1D4ED8", "", "Scaled Attention (1/sqrt(dk))"},
                           {false, "#DC2626", " stroke-dasharray=\"8 5\"", "Unscaled Attention (Vanishing Gradient)"}};
  for (const Series& c : series) {
    std::string pts;
    for (const GradientPoint& p : points)
      pts += num(px(p.dk), "%.1f") + "," + num(py(c.scaled ? p.scaled : p.unscaled), "%.1f") + " ";
    s += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + c.colour + "\" stroke-width=\"2.5\"" + c.dash +
         "/>\n";
    for (const GradientPoint& p : points) {
      const double v = c.scaled ? p.scaled : p.unscaled;
      s += "<circle cx=\"" + num(px(p.dk), "%.1f") + "\" cy=\"" + num(py(v), "%.1f") + "\" r=\"4\" fill=\"" + c.colour +
           "\"><title>dk " + std::to_string(p.dk) + ": " + num(v, "%.5f") + "</title></circle>\n";
    }
  }
  s += "<text x=\"" + num(left + plot_w / 2, "%.0f") + "\" y=\"" + num(top + plot_h + 42, "%.0f") +
       "\" font-size=\"13\" text-anchor=\"middle\">Key Projection Dimension dk (log scale)</text>\n";
  s += "<text x=\"20\" y=\"" + num(top + plot_h / 2, "%.0f") +
       "\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 20 " + num(top + plot_h / 2, "%.0f") +
       ")\">Mean Softmax Gradient E[p(1-p)]</text>\n";
  for (size_t k = 0; k < 2; ++k) {
    const double y = top + plot_h + 72 + 22 * k;
    s += "<line x1=\"" + num(left + 20, "%.0f") + "\" y1=\"" + num(y, "%.0f") + "\" x2=\"" + num(left + 60, "%.0f") +
         "\" y2=\"" + num(y, "%.0f") + "\" stroke=\"" + series[k].colour + "\" stroke-width=\"2.5\"" + series[k].dash + "/>\n";
    s += "<text x=\"" + num(left + 70, "%.0f") + "\" y=\"" + num(y + 4, "%.0f") + "\" font-size=\"12\">" +
         xml_escape(series[k].name) + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

std::string figure_svg(const std::vector<std::string>& tokens, const std::vector<float>& weights,
                       const std::vector<GradientPoint>& points) {
  std::string map = heatmap_svg(tokens, weights, "Self-Attention Map A = Softmax(QK^T / sqrt(dk))");
  map = map.substr(map.find("<svg"));  // nest without the XML declaration
  const std::string chart = gradient_svg(points, "Softmax Gradient Magnitude vs Key Dimension dk");
  auto attr = [](const std::string& svg, const char* name) {
    const size_t p = svg.find(std::string(" ") + name + "=\"") + std::strlen(name) + 3;
    return std::atof(svg.c_str() + p);
  };
  const double w1 = attr(map, "width"), h1 = attr(map, "height");
  const double w2 = attr(chart, "width"), h2 = attr(chart, "height");
  const double w = w1 + w2, h = std::max(h1, h2);
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(w, "%.0f") + "\" height=\"" + num(h, "%.0f") +
       "\" viewBox=\"0 0 " + num(w, "%.0f") + " " + num(h, "%.0f") + "\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<svg x=\"0\" y=\"0\"" + map.substr(4);
  s += "<svg x=\"" + num(w1, "%.0f") + "\" y=\"0\"" + chart.substr(4);
  s += "</svg>\n";
  return s;
}

std::string heatmap_terminal(const std::vector<std::string>& tokens, const std::vector<float>& weights, bool color) {
  static const char* shades[] = {"  ", "\u2591\u2591", "\u2592\u2592", "\u2593\u2593", "\u2588\u2588"};
  const size_t n = tokens.size();
  size_t label = 0;
  for (const std::string& t : tokens) label = std::max(label, t.size());
  const double hi = weights.empty() ? 1.0 : *std::max_element(weights.begin(), weights.end());
  std::string s;
  // Column header: key indices (token names are listed on the left in the same order).
  s += std::string(label + 6, ' ');
  for (size_t j = 0; j < n; ++j) s += num(static_cast<double>(j), "%-2.0f") + " ";
  s += " max  (key)\n";
  for (size_t i = 0; i < n; ++i) {
    s += num(static_cast<double>(i), "%2.0f") + "  " + tokens[i] + std::string(label - tokens[i].size() + 2, ' ');
    size_t best = 0;
    for (size_t j = 0; j < n; ++j) {
      const double w = weights[i * n + j];
      if (w > weights[i * n + best]) best = j;
      const int level = std::min(4, static_cast<int>(std::lround(w / hi * 4.0)));
      if (color) {
        const Rgb c = blues(w / hi);
        char esc[32];
        std::snprintf(esc, sizeof esc, "\x1b[38;2;%d;%d;%dm", static_cast<int>(c.r), static_cast<int>(c.g),
                      static_cast<int>(c.b));
        s += esc;
        s += "\u2588\u2588\x1b[0m ";
      } else {
        s += shades[level];
        s += " ";
      }
    }
    s += " " + num(weights[i * n + best]) + "  " + tokens[best] + "\n";
  }
  s += "scale: ";
  for (int k = 0; k <= 4; ++k) s += std::string("[") + shades[k] + "] " + num(hi * k / 4.0) + (k < 4 ? "  " : "\n");
  return s;
}

}  // namespace tinyattn_demo
