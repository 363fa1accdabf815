// The attention map as pictures: an SVG file (token labels on both axes, a
// colour bar, the weight in each cell; plotly's "Blues" scale as in the
// notebook) and a Unicode block heatmap for the terminal.
#pragma once

#include <string>
#include <vector>

namespace tinyattn_demo {

// weights: [rows][cols] row-major; rows are queries, cols are keys.
std::string heatmap_svg(const std::vector<std::string>& tokens, const std::vector<float>& weights,
                        const std::string& title);

// The notebook's right-hand panel: mean softmax gradient E[p(1-p)] against
// dk (log axis), scaled (solid blue) and unscaled (dashed red).
struct GradientPoint {
  int dk;
  double scaled, unscaled;
};
std::string gradient_svg(const std::vector<GradientPoint>& points, const std::string& title);

// The notebook's figure: the heatmap and the gradient panel side by side.
std::string figure_svg(const std::vector<std::string>& tokens, const std::vector<float>& weights,
                       const std::vector<GradientPoint>& points);

// Shade blocks (" ░▒▓█", scaled to the largest weight) with the row's largest
// weight printed at the end; ANSI colours when `color` is set.
std::string heatmap_terminal(const std::vector<std::string>& tokens, const std::vector<float>& weights, bool color);

}  // namespace tinyattn_demo
