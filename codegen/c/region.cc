// codegen/c/region.cc — node functions inside the inference's one parallel region (see region.h).
#include "codegen/c/region.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <regex>
#include <string>
#include <vector>

namespace onnxc {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The line without its comments; *in_comment carries an unterminated /* to the next line.
std::string code_of(const std::string& line, bool* in_comment) {
  std::string r;
  for (size_t i = 0; i < line.size();) {
    if (*in_comment) {
      size_t e = line.find("*/", i);
      if (e == std::string::npos) return trim(r);
      *in_comment = false;
      i = e + 2;
    } else if (line.compare(i, 2, "/*") == 0) {
      *in_comment = true;
      i += 2;
    } else if (line.compare(i, 2, "//") == 0) {
      break;
    } else {
      r += line[i++];
    }
  }
  return trim(r);
}

// A top-level declaration: `const int64_t n = 49;`, `float* const p = y0 + 16;`,
// `static const float tab[4] = {` (a table over several lines), `onnxc_vf16 acc[4];`.
// shaped: the line has that form; ok: its initializer, if any, calls nothing, so computing it
// on every thread of the region gives each the same value. `(void)x0;` is one without a name.
struct Declaration {
  bool shaped = false, ok = false;
  std::string name;
  bool pointer = false;  // a pointer: writes through it reach memory all threads share
};

Declaration declaration(const std::string& code) {
  static const std::regex decl(
      R"(^(?:static\s+)?(?:const\s+)?(?:(?:unsigned|signed)\s+)?(?!(?:return|goto|if|for|while|do|switch|case|break|continue|else|sizeof)\b)[A-Za-z_]\w*)"
      R"((?:\s+const)?((?:\s*\*\s*(?:const\s+|restrict\s+)*)+|\s+)(?!(?:const|restrict)\b)([A-Za-z_]\w*)(?:\[[^\]]*\])*\s*(=\s*(.*))?$)");
  static const std::regex call(R"([A-Za-z_]\w*\s*\()");
  static const std::regex void_cast(R"(^\(void\)\s*[A-Za-z_]\w*;$)");
  Declaration d;
  if (std::regex_match(code, void_cast)) {
    d.shaped = d.ok = true;
    return d;
  }
  if (code.empty() || (code.back() != ';' && code.back() != '{')) return d;
  std::smatch m;
  const std::string head = code.substr(0, code.size() - 1);
  if (!std::regex_match(head, m, decl)) return d;
  d.shaped = true;
  d.pointer = m[1].str().find('*') != std::string::npos;
  d.name = m[2].str();
  const std::string init = m[4].str();
  if (code.back() == '{') d.ok = m[3].matched && trim(init).empty();  // `= {`: a table
  else d.ok = !std::regex_search(init, call);
  return d;
}

struct Local {
  std::string name;
  bool pointer;
  long level;  // bare blocks open around its declaration
};

// Whether a statement may change a local of the function (its value, or an element of a local
// array or vector): each thread has its own, so the statement cannot run on one thread only.
bool writes_local(const std::string& stmt, const std::vector<Local>& locals) {
  for (const Local& l : locals) {
    const std::string n = l.name;
    const std::string elements = l.pointer ? "" : R"((?:\s*\[[^\]]*\])*)";
    const std::regex write("(?:^|[^\\w.>])(?:" + n + elements + R"(\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|(?:\+\+|--)\s*)" + n + R"(\b|)" + n +
                           R"(\s*(?:\+\+|--)|&\s*)" + n + R"(\b))");
    if (std::regex_search(stmt, write)) return true;
  }
  return false;
}

bool starts_with_word(const std::string& code, const char* w) {
  const size_t n = std::char_traits<char>::length(w);
  return code.compare(0, n, w) == 0 && (code.size() == n || !(std::isalnum(static_cast<unsigned char>(code[n])) || code[n] == '_'));
}

// A body's lines, each with its code (comments removed, code_of); *in_comment says whether the
// body ends inside a comment.
struct Line {
  std::string text, code;
};

std::vector<Line> body_lines(const std::string& body, bool* in_comment) {
  std::vector<Line> lines;
  *in_comment = false;
  for (size_t p = 0; p < body.size();) {
    size_t e = body.find('\n', p);
    if (e == std::string::npos) e = body.size();
    lines.push_back({body.substr(p, e - p), ""});
    lines.back().code = code_of(lines.back().text, in_comment);
    p = e + 1;
  }
  return lines;
}

// A loop header the emitter writes: `for (int64_t v = LO; v < HI; ++v) {` (or `v += STEP`), the
// rest of the line after the parenthesis in `rest` ("", " {" or a one-line body).
struct LoopHeader {
  std::string type, var, lo, hi, step, rest;
};

bool loop_header(const std::string& code, LoopHeader* h) {
  static const std::regex re(
      R"(^for \((\w+) (\w+) = ([^;]+); (\w+) < ([^;]+); (?:\+\+(\w+)|(\w+)\+\+|(\w+) \+= ([^)]+))\)(.*)$)");
  std::smatch m;
  if (!std::regex_match(code, m, re)) return false;
  const std::string v = m[2].str();
  const std::string inc = m[6].matched ? m[6].str() : m[7].matched ? m[7].str() : m[8].str();
  if (m[4].str() != v || inc != v) return false;
  *h = {m[1].str(), v, trim(m[3].str()), trim(m[5].str()), m[9].matched ? trim(m[9].str()) : "1", m[10].str()};
  return true;
}

bool mentions(const std::string& text, const std::string& word) {
  return std::regex_search(text, std::regex("\\b" + word + "\\b"));
}

// x as an operand: in parentheses unless it is a name or a number.
std::string operand(const std::string& x) {
  static const std::regex word(R"(^\w+$)");
  if (std::regex_match(x, word)) return x;
  // Already one parenthesized whole: the first parenthesis closes at the end.
  long depth = 0;
  for (size_t i = 0; i < x.size() && x[0] == '('; ++i) {
    depth += x[i] == '(' ? 1 : x[i] == ')' ? -1 : 0;
    if (depth == 0) {
      if (i + 1 == x.size()) return x;
      break;
    }
  }
  return "(" + x + ")";
}

// The number of iterations of a header, as a C expression (an operand).
std::string trip_count(const LoopHeader& h) {
  const std::string span = h.lo == "0" ? h.hi : operand(h.hi) + " - " + operand(h.lo);
  return h.step == "1" ? operand(span) : "((" + operand(span) + " + " + operand(h.step) + " - 1) / " + operand(h.step) + ")";
}

}  // namespace

// The clauses of a worksharing loop as the emitter writes it, `ONNXC_PRAGMA(omp for CLAUSES)`:
// simd, nowait, schedule(static), collapse(k). False for a line of another shape or with
// another clause.
struct ForClauses {
  bool simd = false, nowait = false;
  size_t collapse = 1;
};

bool for_clauses(const std::string& code, ForClauses* c) {
  if (!code.starts_with("ONNXC_PRAGMA(omp for") || code.back() != ')') return false;
  static const std::regex clause(R"(^\s*(simd|nowait|schedule\(static\)|collapse\((\d+)\))\s*)");
  std::string clauses = code.substr(20, code.size() - 21);
  for (std::smatch m; !trim(clauses).empty(); clauses = m.suffix().str()) {
    if (!std::regex_search(clauses, m, clause)) return false;
    if (m[1].str() == "simd") c->simd = true;
    else if (m[1].str() == "nowait") c->nowait = true;
    else if (m[2].matched) c->collapse = std::stoul(m[2].str());
  }
  return true;
}

namespace {

// The value of an integer constant expression of the emitter's loop bounds (literals, + - * /,
// parentheses); false for anything else (a name, a call, a division by zero).
bool constant_value(const std::string& text, int64_t* value) {
  size_t i = 0;
  bool ok = true;
  auto skip = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  std::function<int64_t()> sum;
  std::function<int64_t()> atom = [&]() -> int64_t {
    skip();
    if (i < text.size() && text[i] == '(') {
      ++i;
      const int64_t v = sum();
      skip();
      if (i >= text.size() || text[i] != ')') ok = false;
      ++i;
      return v;
    }
    if (i < text.size() && text[i] == '-') {
      ++i;
      return -atom();
    }
    if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) {
      ok = false;
      return 0;
    }
    int64_t v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (v > (int64_t{1} << 50)) ok = false;
      v = v * 10 + (text[i++] - '0');
    }
    if (i < text.size() && (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_' || text[i] == '.')) ok = false;
    return v;
  };
  auto product = [&]() -> int64_t {
    int64_t v = atom();
    for (skip(); ok && i < text.size() && (text[i] == '*' || text[i] == '/'); skip()) {
      const char op = text[i++];
      const int64_t r = atom();
      if (op == '/' && r == 0) ok = false;
      else v = op == '*' ? v * r : v / r;
    }
    return v;
  };
  sum = [&]() -> int64_t {
    int64_t v = product();
    for (skip(); ok && i < text.size() && (text[i] == '+' || text[i] == '-'); skip()) {
      const char op = text[i++];
      const int64_t r = product();
      v = op == '+' ? v + r : v - r;
    }
    return v;
  };
  const int64_t v = sum();
  skip();
  if (!ok || i != text.size()) return false;
  *value = v;
  return true;
}

}  // namespace

int64_t parallel_iterations(const std::string& body) {
  bool in_comment = false;
  const std::vector<Line> lines = body_lines(body, &in_comment);
  static const std::regex collapse(R"(collapse\((\d+)\))");
  int64_t most = 0;
  bool unknown = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& code = lines[i].code;
    if (!code.starts_with("ONNXC_PRAGMA(omp parallel for") && !code.starts_with("ONNXC_PRAGMA(omp for")) continue;
    std::smatch m;
    const size_t k = std::regex_search(code, m, collapse) ? std::stoul(m[1].str()) : 1;
    int64_t iterations = 1;
    for (size_t j = 0; j < k; ++j) {
      LoopHeader h;
      int64_t lo = 0, hi = 0, step = 0;
      if (i + 1 + j >= lines.size() || !loop_header(lines[i + 1 + j].code, &h) || !constant_value(h.lo, &lo) ||
          !constant_value(h.hi, &hi) || !constant_value(h.step, &step) || step <= 0) {
        iterations = -1;
        break;
      }
      iterations *= hi > lo ? (hi - lo + step - 1) / step : 0;
    }
    if (iterations < 0) unknown = true;
    else most = std::max(most, iterations);
  }
  if (most > 0) return most;
  return unknown ? 0 : 1;
}

RegionBody region_body(const std::string& body) {
  RegionBody r;
  r.body = body;
  bool in_comment = false;
  const std::vector<Line> lines = body_lines(body, &in_comment);
  const bool empty = std::all_of(lines.begin(), lines.end(), [](const Line& l) { return l.code.empty(); });
  if (empty) {  // nothing to run (a Concat whose inputs were written in place): every thread, no barrier needed
    r.role = RegionRole::Shared;
    return r;
  }
  if (body.find("omp parallel") == std::string::npos) {
    r.role = RegionRole::Serial;
    return r;
  }
  const RegionBody alone{RegionRole::Alone, body};
  enum class State { Top, AfterFor, AfterBlock, AfterSimd, InStatement } state = State::Top;
  enum class Kind { Declaration, Loop, Block, Serial } kind = Kind::Declaration;
  long depth = 0;  // of braces within the statement
  long bare = 0;   // bare blocks open around it
  std::vector<Local> locals;
  std::string out, stmt_lines, stmt_code, indent;
  for (const Line& ln : lines) {
    std::string line = ln.text;
    const std::string& code = ln.code;
    if (state == State::Top) {
      if (code.empty() || code == "{" || code == "}") {  // a bare block: a scope for declarations
        bare += code == "{" ? 1 : code == "}" ? -1 : 0;
        if (bare < 0) return alone;
        while (!locals.empty() && locals.back().level > bare) locals.pop_back();
        out += line + "\n";
        continue;
      }
      indent = line.substr(0, line.find_first_not_of(' '));
      stmt_lines.clear();
      stmt_code.clear();
      if (code.starts_with("ONNXC_PRAGMA(omp parallel for")) {
        // Clauses that would mean something else on an orphaned loop keep the fork/join.
        for (const char* clause : {"reduction", "num_threads", "if(", "if (", "private", "shared", "copyin"})
          if (code.find(clause) != std::string::npos) return alone;
        line.replace(line.find("omp parallel for"), 16, "omp for");
        out += line + "\n";
        state = State::AfterFor;
        continue;
      }
      if (code == "ONNXC_PRAGMA(omp parallel)") {
        state = State::AfterBlock;  // the pragma line goes; the block ends in a barrier
        continue;
      }
      if (code.starts_with("ONNXC_PRAGMA(omp simd")) {  // a serial vector loop
        kind = Kind::Serial;
        stmt_lines = "  " + line + "\n";
        state = State::AfterSimd;
        continue;
      }
      if (code.starts_with("ONNXC_PRAGMA") || code.starts_with("#")) return alone;
      for (const char* w : {"return", "goto", "else", "case", "default", "break", "continue"})
        if (starts_with_word(code, w)) return alone;
      const Declaration d = declaration(code);
      if (d.shaped && !d.ok) return alone;
      if (d.shaped) {
        if (!d.name.empty()) locals.push_back({d.name, d.pointer, bare});
        kind = Kind::Declaration;
      } else {
        kind = Kind::Serial;  // a statement for one thread
      }
      state = State::InStatement;
    } else if (state == State::AfterFor) {
      if (!code.starts_with("for (")) return alone;
      kind = Kind::Loop;
      state = State::InStatement;
    } else if (state == State::AfterBlock) {
      if (code != "{") return alone;
      kind = Kind::Block;
      state = State::InStatement;
    } else if (state == State::AfterSimd) {
      if (!code.starts_with("for (")) return alone;
      state = State::InStatement;
    } else if ((kind == Kind::Declaration || kind == Kind::Serial) && code.find("ONNXC_PRAGMA") != std::string::npos &&
               !code.starts_with("ONNXC_PRAGMA(omp simd")) {
      return alone;
    }
    if (kind == Kind::Serial) {
      if (code.find("return") != std::string::npos || code.find("goto") != std::string::npos) return alone;
      stmt_lines += (line.empty() || line[0] == '#' ? "" : "  ") + line + "\n";
      stmt_code += code + "\n";
    }
    for (char c : code) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (depth < 0) return alone;
    const bool ends = depth == 0 && !code.empty() && (code.back() == ';' || code.back() == '}');
    if (kind == Kind::Block && ends) {
      if (code != "}") return alone;
      out += indent + "  ONNXC_PRAGMA(omp barrier)\n";
    }
    if (kind != Kind::Serial) out += line + "\n";
    if (state == State::InStatement && ends) {
      if (kind == Kind::Serial) {
        if (writes_local(stmt_code, locals)) return alone;
        out += indent + "ONNXC_PRAGMA(omp single)\n" + indent + "{\n" + stmt_lines + indent + "}\n";
      }
      state = State::Top;
    }
  }
  if (state != State::Top || depth != 0 || bare != 0 || in_comment) return alone;
  if (!body.empty() && body.back() != '\n') out.pop_back();
  r.role = RegionRole::Shared;
  r.body = out;
  return r;
}

std::string group_body(const std::string& shared) {
  if (shared.find("omp_") != std::string::npos) return "";  // the team's thread numbers or count
  bool in_comment = false;
  const std::vector<Line> lines = body_lines(shared, &in_comment);
  std::string out;
  // The statement after a worksharing construct: when it ends (braces balanced, the line ends
  // in `;` or `}`), the group's barrier unless the construct said nowait.
  bool pending = false, pending_barrier = false;
  long depth = 0;
  std::string pending_indent;
  auto follow = [&](const std::string& code) {  // a line of the pending statement
    for (char c : code) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (depth < 0) return false;
    if (depth == 0 && !code.empty() && (code.back() == ';' || code.back() == '}')) {
      if (pending_barrier) out += pending_indent + "onnxc_group_barrier(onnxc_g);\n";
      pending = false;
    }
    return true;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i].text;
    const std::string& code = lines[i].code;
    const std::string indent = line.substr(0, line.find_first_not_of(' '));
    const bool pragma = code.starts_with("ONNXC_PRAGMA(");
    if (pragma && code.starts_with("ONNXC_PRAGMA(omp simd")) {
      out += line + "\n";
      continue;
    }
    if (pending) {
      if (pragma) return "";
      out += line + "\n";
      if (!follow(code)) return "";
      continue;
    }
    if (!pragma) {
      out += line + "\n";
      continue;
    }
    if (code == "ONNXC_PRAGMA(omp barrier)") {
      out += indent + "onnxc_group_barrier(onnxc_g);\n";
      continue;
    }
    if (code == "ONNXC_PRAGMA(omp single)" || code == "ONNXC_PRAGMA(omp single nowait)") {
      out += indent + "if (onnxc_g->rank == 0)\n";
      pending = true;
      pending_barrier = code.find("nowait") == std::string::npos;
      pending_indent = indent;
      depth = 0;
      continue;
    }
    ForClauses fc;
    if (!for_clauses(code, &fc)) return "";
    const bool simd = fc.simd, nowait = fc.nowait;
    const size_t k = fc.collapse;
    if (k < 1 || k > 8 || i + k >= lines.size()) return "";
    std::vector<LoopHeader> hs(k);
    std::vector<std::string> indents(k);
    for (size_t j = 0; j < k; ++j) {
      const std::string& hl = lines[i + 1 + j].text;
      if (!loop_header(lines[i + 1 + j].code, &hs[j])) return "";
      indents[j] = hl.substr(0, hl.find_first_not_of(' '));
      if (k > 1 && hs[j].rest != " {") return "";  // a collapsed nest: each loop opens a block
      for (size_t q = 0; q < j; ++q)              // and its bounds do not move with the outer loops
        if (mentions(hs[j].lo + " " + hs[j].hi + " " + hs[j].step, hs[q].var)) return "";
    }
    if (simd && k > 1) return "";
    if (simd) out += indent + "ONNXC_PRAGMA(omp simd)\n";
    std::string head;
    if (k == 1) {
      const LoopHeader& h = hs[0];
      const std::string n = trip_count(h);
      const std::string at = h.step == "1" ? "" : operand(h.step) + " * ";
      const std::string lo = h.lo == "0" ? "" : operand(h.lo) + " + ";
      head = indents[0] + "for (" + h.type + " " + h.var + " = " + lo + at + "onnxc_group_lo(onnxc_g, " + n + "), onnxc_end = " + lo + at +
             "onnxc_group_hi(onnxc_g, " + n + "); " + h.var + " < onnxc_end; " + (h.step == "1" ? "++" + h.var : h.var + " += " + h.step) +
             ")" + h.rest + "\n";
    } else {
      // One flattened range; each loop's variable from the flat index, outermost slowest.
      std::vector<std::string> n(k);
      for (size_t j = 0; j < k; ++j) n[j] = trip_count(hs[j]);
      std::string all = n[0];
      for (size_t j = 1; j < k; ++j) all += " * " + n[j];
      head = indents[0] + "for (int64_t onnxc_i = onnxc_group_lo(onnxc_g, " + all + "), onnxc_end = onnxc_group_hi(onnxc_g, " + all +
             "); onnxc_i < onnxc_end; ++onnxc_i) {\n";
      for (size_t j = 0; j < k; ++j) {
        std::string inner;
        for (size_t q = j + 1; q < k; ++q) inner += (inner.empty() ? "" : " * ") + n[q];
        std::string idx = inner.empty() ? "onnxc_i" : "onnxc_i / " + operand(inner);
        if (j > 0) idx = operand(idx) + " % " + n[j];
        const LoopHeader& h = hs[j];
        if (j > 0) head += indents[j] + "{\n";
        head += indents[j] + "  const " + h.type + " " + h.var + " = " + (h.lo == "0" ? "" : operand(h.lo) + " + ") +
                (h.step == "1" ? idx : operand(h.step) + " * " + operand(idx)) + ";\n";
      }
    }
    out += head;
    pending = true;
    pending_barrier = !nowait;
    pending_indent = indent;
    depth = 0;
    for (size_t j = 0; j < k; ++j) {
      const std::string rest = j + 1 == k ? hs[j].rest : " {";
      if (j + 1 < k) depth += 1;
      else if (!follow(trim(rest).empty() ? ")" : trim(rest))) return "";
    }
    i += k;
  }
  if (pending || in_comment) return "";
  if (!shared.empty() && shared.back() != '\n') out.pop_back();
  return out;
}

std::string task_body(const std::string& shared) {
  if (shared.find("omp_") != std::string::npos) return "";  // the team's thread numbers or count
  bool in_comment = false;
  const std::vector<Line> lines = body_lines(shared, &in_comment);
  std::string out;
  for (const Line& ln : lines) {
    const std::string& line = ln.text;
    const std::string& code = ln.code;
    const std::string indent = line.substr(0, line.find_first_not_of(' '));
    if (!code.starts_with("ONNXC_PRAGMA(") || code.starts_with("ONNXC_PRAGMA(omp simd")) {
      out += line + "\n";
      continue;
    }
    // One task runs the body: a barrier waits for nothing (every taskloop below has waited for
    // its own tasks), a single is the task itself.
    if (code == "ONNXC_PRAGMA(omp barrier)" || code == "ONNXC_PRAGMA(omp single)" || code == "ONNXC_PRAGMA(omp single nowait)") continue;
    // A taskloop keeps simd and collapse; it waits for its tasks (its implicit taskgroup) where
    // the loop had a barrier, and after a nowait loop too.
    ForClauses fc;
    if (!for_clauses(code, &fc)) return "";
    out += indent + "ONNXC_PRAGMA(omp taskloop" + (fc.simd ? " simd" : "") + (fc.collapse > 1 ? " collapse(" + std::to_string(fc.collapse) + ")" : "") +
           " num_tasks(onnxc_taskloop_chunks()))\n";
  }
  if (in_comment) return "";
  if (!shared.empty() && shared.back() != '\n') out.pop_back();
  return out;
}

const char* task_runtime_c() {
  return R"(/* OpenMP tasks (codegen/c/region.h): the tasks of one taskloop, so that a thread that has run out of ready
 * tasks takes part of the loops of the others: 8 per thread in a team of up to 2 threads, 2 per thread up to 4,
 * one per thread above (passes/schedule.cc predicts with the same counts). Every chunk goes through the
 * runtime's task queue, which the team shares: on a 16-core Xeon, googlenet's regions with 8 chunks per thread
 * took 1.3x (8 threads) and 1.9x (16 threads) their time with one; on a 2-core EPYC one per thread was 6% slower than 8. */
#ifndef ONNXC_RT_FN /* onnxc_runtime.h's: static, and no warning when a model does not use it */
#define ONNXC_RT_FN static
#endif
ONNXC_RT_FN int onnxc_taskloop_chunks(void) {
#ifdef _OPENMP
  const int t = omp_get_num_threads();
  return t * (t <= 2 ? 8 : t <= 4 ? 2 : 1);
#else
  return 1;
#endif
}

)";
}

const char* group_runtime_c() {
  return R"(/* Thread groups (codegen/c/region.h): a fork-join region inside the run's parallel region runs each of its
 * lists on a group of the team's threads, which split the list's loops among them and wait only for each
 * other, at the group's barrier. */
#include <sched.h>
#ifndef ONNXC_RT_FN /* onnxc_runtime.h's: static, and no warning when a model does not use it */
#define ONNXC_RT_FN static
#endif
typedef struct {
  atomic_int arrived; /* members at the barrier of the current phase */
  atomic_int phase;   /* barriers passed */
} onnxc_group_sync;
typedef struct {
  onnxc_group_sync* sync;
  int rank, size, phase;
} onnxc_group;

ONNXC_RT_FN void onnxc_group_sync_init(onnxc_group_sync* s, int n) {
  for (int i = 0; i < n; ++i) {
    atomic_init(&s[i].arrived, 0);
    atomic_init(&s[i].phase, 0);
  }
}

/* Whether this thread runs list `list` of a region of `lists` lists (their predicted times at one thread
 * in `cost`), and as which member of the list's group. With T threads and T <= lists, list l runs on
 * thread l mod T alone. Otherwise list l gets one thread plus a share of the other T - lists in
 * proportion to its time; a group is a run of consecutive thread numbers. */
ONNXC_RT_FN int onnxc_group_join(onnxc_group* g, onnxc_group_sync* syncs, int lists, const int64_t* cost, int list) {
#ifdef _OPENMP
  const int threads = omp_get_num_threads(), t = omp_get_thread_num();
#else
  const int threads = 1, t = 0;
#endif
  g->sync = &syncs[list];
  g->phase = 0;
  g->rank = 0;
  g->size = 1;
  if (threads <= lists) return list % threads == t;
  int64_t total = 0, before = 0;
  for (int l = 0; l < lists; ++l) {
    total += cost[l] > 0 ? cost[l] : 1;
    if (l < list) before = total;
  }
  const int64_t extra = threads - lists, mine = cost[list] > 0 ? cost[list] : 1;
  const int first = list + (int)(extra * before / total), end = list + 1 + (int)(extra * (before + mine) / total);
  if (t < first || t >= end) return 0;
  g->rank = t - first;
  g->size = end - first;
  return 1;
}

/* The member's share of n iterations: the static split of `omp for`, among the group. */
ONNXC_RT_FN inline int64_t onnxc_group_lo(const onnxc_group* g, int64_t n) {
  const int64_t q = n / g->size, r = n % g->size;
  return g->rank * q + (g->rank < r ? g->rank : r);
}
ONNXC_RT_FN inline int64_t onnxc_group_hi(const onnxc_group* g, int64_t n) {
  return onnxc_group_lo(g, n) + n / g->size + (g->rank < n % g->size ? 1 : 0);
}

/* The group's barrier: the last member to arrive opens the next phase; the others spin, then yield. */
ONNXC_RT_FN void onnxc_group_barrier(onnxc_group* g) {
  if (g->size <= 1) return;
  const int next = ++g->phase;
  if (atomic_fetch_add(&g->sync->arrived, 1) == g->size - 1) {
    atomic_store(&g->sync->arrived, 0);
    atomic_store(&g->sync->phase, next);
    return;
  }
  for (unsigned spins = 0; atomic_load(&g->sync->phase) != next; ++spins)
    if (spins >= 4000) sched_yield();
}

)";
}

}  // namespace onnxc
