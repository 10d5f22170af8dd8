// codegen/c/region.cc — node functions inside the inference's one parallel region (see region.h).
#include "codegen/c/region.h"

#include <cctype>
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

}  // namespace

RegionBody region_body(const std::string& body) {
  RegionBody r;
  r.body = body;
  // The body's lines, each with its code (comments removed).
  struct Line {
    std::string text, code;
  };
  std::vector<Line> lines;
  bool in_comment = false, empty = true;
  for (size_t p = 0; p < body.size();) {
    size_t e = body.find('\n', p);
    if (e == std::string::npos) e = body.size();
    lines.push_back({body.substr(p, e - p), ""});
    lines.back().code = code_of(lines.back().text, &in_comment);
    empty = empty && lines.back().code.empty();
    p = e + 1;
  }
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

}  // namespace onnxc
