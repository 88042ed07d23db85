// Converts a golden corpus (schema renewable-huber-native-golden v1) into the flat text fixture that the C driver
// golden_stream.c reads, so the C side needs no JSON parser. Numbers are written with 17 significant digits, which
// round-trips every double exactly.
//
// Fixture grammar (whitespace-separated tokens):
//   rh-golden-fixture 1 cases N
//   per case:  case ID DTYPE(f32|f64) RTOL ATOL
//              config TAU PENALTY(its name) LAMBDA_SCALE BANDWIDTH_SCALE FIT_INTERCEPT MAX_ITER TOL RIDGE
//              batches B
//              per batch: batch ROWS COLS HAS_WEIGHTS  X(row-major)  Y  [W]
//                         expect Q N_SAMPLES_SEEN BATCH_COUNT PREVIOUS_LAMBDA WEIGHT_SUM CONVERGED OBJECTIVE
//                                LAMBDA_VALUE BANDWIDTH  COEFFICIENTS(Q)  INFORMATION(Q*Q, row-major)
//              probe ROWS COLS X(row-major)  predictions M VALUES(M)
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

using nlohmann::json;

namespace {

std::string g17(const json& v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
  return buf;
}

void numbers(std::ostream& out, const json& values) {
  for (const auto& v : values) out << ' ' << g17(v);
  out << '\n';
}

void matrix(std::ostream& out, const json& rows) {
  for (const auto& r : rows) numbers(out, r);
}

std::size_t columns(const json& rows) { return rows.empty() ? 0 : rows.at(0).size(); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: rh_golden_fixture CORPUS.json OUT.fixture\n";
    return 2;
  }
  try {
    std::ifstream in(argv[1]);
    if (!in) throw std::runtime_error(std::string("cannot open ") + argv[1]);
    const json doc = json::parse(in);
    if (doc.at("schema") != "renewable-huber-native-golden" || doc.at("schema_version") != 1)
      throw std::runtime_error("not a renewable-huber-native-golden schema_version 1 corpus");
    std::ofstream out(argv[2]);
    out << "rh-golden-fixture 1 cases " << doc.at("cases").size() << '\n';
    for (const auto& c : doc.at("cases")) {
      const auto& cfg = c.at("config");
      out << "case " << c.at("id").get<std::string>() << ' '
          << (cfg.at("dtype").get<std::string>() == "float32" ? "f32" : "f64") << ' ' << g17(c.at("rtol")) << ' '
          << g17(c.at("atol")) << '\n';
      out << "config " << g17(cfg.at("tau")) << ' ' << cfg.at("penalty").get<std::string>() << ' '
          << g17(cfg.at("lambda_scale")) << ' ' << g17(cfg.at("bandwidth_scale")) << ' '
          << (cfg.at("fit_intercept").get<bool>() ? 1 : 0) << ' ' << cfg.at("max_iter").get<int>() << ' '
          << g17(cfg.at("tol")) << ' ' << g17(cfg.at("ridge")) << '\n';
      const auto& batches = c.at("batches");
      const auto& states = c.at("expected").at("states");
      if (batches.size() != states.size()) throw std::runtime_error("batches and expected states differ in count");
      out << "batches " << batches.size() << '\n';
      for (std::size_t b = 0; b < batches.size(); ++b) {
        const auto& batch = batches[b];
        const bool weighted = !batch.at("sample_weight").is_null();
        out << "batch " << batch.at("X").size() << ' ' << columns(batch.at("X")) << ' ' << (weighted ? 1 : 0) << '\n';
        matrix(out, batch.at("X"));
        numbers(out, batch.at("y"));
        if (weighted) numbers(out, batch.at("sample_weight"));
        const auto& st = states[b];
        const auto& d = st.at("diagnostics");
        out << "expect " << st.at("coefficients").size() << ' ' << st.at("n_samples_seen").get<long long>() << ' '
            << st.at("batch_count").get<long long>() << ' ' << g17(st.at("previous_lambda")) << ' '
            << g17(st.at("weight_sum")) << ' ' << (d.at("converged").get<bool>() ? 1 : 0) << ' '
            << g17(d.at("objective")) << ' ' << g17(d.at("lambda_value")) << ' ' << g17(d.at("bandwidth")) << '\n';
        numbers(out, st.at("coefficients"));
        matrix(out, st.at("information"));
      }
      const auto& probe = c.at("probe_X");
      out << "probe " << probe.size() << ' ' << columns(probe) << '\n';
      matrix(out, probe);
      const auto& predictions = c.at("expected").at("predictions");
      out << "predictions " << predictions.size();
      numbers(out, predictions);
    }
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "rh_golden_fixture: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
