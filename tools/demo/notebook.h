// The seed notebook (50_scaled_dot_product_attention), computed with tinyattn:
// the self-attention map of the example sentence, the properties table, the
// softmax-saturation table and the contextual-disambiguation table. The
// random inputs come from RandomState, drawn in the notebook's order, so every
// printed number matches the notebook's.
#pragma once

#include <string>
#include <vector>

#include "tinyattn/tinyattn.h"

namespace tinyattn_demo {

struct AttentionMap {
  std::vector<std::string> tokens;
  std::vector<double> embeddings;  // [tokens][32], as the notebook builds them
  std::vector<float> weights;      // [tokens][tokens], tinyattn's softmax weights
};

struct SaturationRow {
  int dk;
  double scaled;    // mean p(1 - p) with the 1/sqrt(dk) scale
  double unscaled;  // the same without the scale
};

struct TextRow {
  std::vector<std::string> cells;
};

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<TextRow> rows;
};

struct Notebook {
  AttentionMap map;
  std::vector<SaturationRow> saturation;
  Table saturation_table;
  Table properties;
  Table disambiguation;
  bool ok = true;          // every tinyattn call returned kOk
  std::string error;       // the first failure, if any
};

// Runs every cell of the notebook, in its order, on the given port.
Notebook run_notebook(tinyattn::Port port = tinyattn::Port::kDefault);

// A plain-text table with aligned columns.
std::string render(const Table& t);

}  // namespace tinyattn_demo
