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

// Shade blocks (" ░▒▓█", scaled to the largest weight) with the row's largest
// weight printed at the end; ANSI colours when `color` is set.
std::string heatmap_terminal(const std::vector<std::string>& tokens, const std::vector<float>& weights, bool color);

}  // namespace tinyattn_demo
