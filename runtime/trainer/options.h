//===- options.h - the trainer's options, from trainer_options.def --------===//
//
// What C++ derives from the one table of trainer options
// (runtime/include/tcc/trainer_options.def): the options' values with their
// C++ types and defaults (OptionValues, whose members are named as the C
// fields), the rows as data (kOptionRows, for help and tests), the
// conversions to and from tcc_trainer_options, and the ranges. Header-only:
// tcc-run fills OptionValues from its flags and hands them to the C API.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_OPTIONS_H
#define TCC_RUNTIME_TRAINER_OPTIONS_H

#include "runtime/include/tcc/tcc.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace tcc::train {

/// How an option's value is read and checked (trainer_options.def's KIND).
enum class OptionKind { Text, Choice, Count, Seed, Rate, Real, Hyper, Scale, Switch, NoSwitch };

/// The C++ type of a KIND's values and the conversion of a DEFAULT to it.
template <OptionKind K> struct OptionValue {
  using type = double; // Rate, Real, Hyper, Scale
  static double from(double v) { return v; }
};
template <> struct OptionValue<OptionKind::Text> {
  using type = std::string;
  static std::string from(const char *v) { return v ? v : ""; }
};
template <> struct OptionValue<OptionKind::Choice> : OptionValue<OptionKind::Text> {};
template <> struct OptionValue<OptionKind::Count> {
  using type = long;
  static long from(long v) { return v; }
};
template <> struct OptionValue<OptionKind::Seed> {
  using type = uint64_t;
  static uint64_t from(uint64_t v) { return v; }
};
template <> struct OptionValue<OptionKind::Switch> {
  using type = bool;
  static bool from(int v) { return v != 0; }
};
template <> struct OptionValue<OptionKind::NoSwitch> : OptionValue<OptionKind::Switch> {};

/// The options' values, each member named as its tcc_trainer_options field
/// (and its Python keyword): one name from the C API to the training loop.
/// Strings are empty where the C field is NULL and no default says more.
struct OptionValues {
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP)                    \
  OptionValue<OptionKind::KIND>::type NAME = OptionValue<OptionKind::KIND>::from(DEFAULT);
#include "runtime/include/tcc/trainer_options.def"
};

/// One row of the table, as data.
struct OptionRow {
  const char *name;
  OptionKind kind;
  const char *flag;
  const char *arg;
  const char *defaultText; // DEFAULT as written: 10, 0.1, "constant", NULL, NAN
  const char *range;
  const char *help;
  /// DEFAULT as help shows it ("constant", "10"), or "" where it stands for
  /// "not given": a switch's, NULL, NaN, and a number outside RANGE (--lr's
  /// 0, which a run must replace; --eval-every's 0, which leaves it off).
  inline std::string shownDefault() const;
  bool takesValue() const { return kind != OptionKind::Switch && kind != OptionKind::NoSwitch; }
};

inline constexpr OptionRow kOptionRows[] = {
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP)                    \
  {#NAME, OptionKind::KIND, FLAG, ARG, #DEFAULT, RANGE, HELP},
#include "runtime/include/tcc/trainer_options.def"
};

/// The row of the option NAME (a C field), or null.
inline const OptionRow *findOptionRow(const std::string &name) {
  for (const OptionRow &row : kOptionRows)
    if (name == row.name)
      return &row;
  return nullptr;
}

/// The row of the option NAME, known to exist (used by the X-macro users).
#define TCC_OPTION_ROW(NAME) (*::tcc::train::findOptionRow(#NAME))

namespace detail {
inline void toC(const std::string &v, const char *&c) { c = v.empty() ? nullptr : v.c_str(); }
inline void toC(long v, int64_t &c) { c = v; }
inline void toC(long v, int32_t &c) { c = int32_t(v); }
inline void toC(uint64_t v, uint64_t &c) { c = v; }
inline void toC(double v, double &c) { c = v; }
inline void toC(bool v, int32_t &c) { c = v ? 1 : 0; }

template <OptionKind K> void fromC(const char *c, std::string &v) {
  if (c) // NULL: the default
    v = c;
}
template <OptionKind K> void fromC(int64_t c, long &v) { v = long(c); }
template <OptionKind K> void fromC(int32_t c, long &v) { v = long(c); }
template <OptionKind K> void fromC(uint64_t c, uint64_t &v) { v = c; }
template <OptionKind K> void fromC(int32_t c, bool &v) { v = c != 0; }
template <OptionKind K> void fromC(double c, double &v) {
  // A scale of 0 is the default too (what tcc_trainer_options_init wrote
  // before the default was spelled out).
  if (K != OptionKind::Scale || c != 0)
    v = c;
}
} // namespace detail

/// Sets the option fields of C from VALUES: strings point into VALUES
/// (valid while it is, NULL where empty); the other fields are left alone.
inline void toC(const OptionValues &values, tcc_trainer_options &c) {
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP)                    \
  detail::toC(values.NAME, c.NAME);
#include "runtime/include/tcc/trainer_options.def"
}

/// Sets VALUES from the option fields of C (NULL strings keep the default).
inline void fromC(const tcc_trainer_options &c, OptionValues &values) {
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP)                    \
  detail::fromC<OptionKind::KIND>(c.NAME, values.NAME);
#include "runtime/include/tcc/trainer_options.def"
}

/// The defaults of the C struct's option fields, as tcc_trainer_options_init
/// writes them.
inline void setDefaults(tcc_trainer_options &c) {
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP) c.NAME = DEFAULT;
#include "runtime/include/tcc/trainer_options.def"
}

/// A RANGE of the table: an interval (a Count's, a number's) with the unit
/// it counts, or the words of a Choice.
struct OptionRange {
  double lo = -INFINITY, hi = INFINITY;
  bool loOpen = false, hiOpen = false;
  std::string loText, hiText; // the bounds as written ("0", "1e6", "inf")
  std::string unit;
  std::string words; // "a|b|c"
  bool contains(double v) const {
    return (loOpen ? v > lo : v >= lo) && (hiOpen ? v < hi : v <= hi);
  }
  /// The words as prose: "a, b or c".
  std::string wordList() const {
    std::string out, rest = words;
    for (size_t bar; (bar = rest.find('|')) != std::string::npos; rest.erase(0, bar + 1))
      out += (out.empty() ? "" : ", ") + rest.substr(0, bar);
    return out.empty() ? rest : out + " or " + rest;
  }
  bool isWords() const { return !words.empty(); }
};

/// ROW's range, parsed: "[LO, HI) UNIT" (inf for no bound), "a|b|c", or ""
/// (any value).
inline OptionRange optionRange(const OptionRow &row) {
  OptionRange r;
  std::string text = row.range;
  if (text.empty())
    return r;
  if (text[0] != '[' && text[0] != '(') {
    r.words = text;
    return r;
  }
  size_t comma = text.find(','), close = text.find_first_of(")]");
  auto trim = [](std::string s) {
    while (!s.empty() && s.front() == ' ')
      s.erase(0, 1);
    return s;
  };
  r.loOpen = text[0] == '(';
  r.hiOpen = text[close] == ')';
  r.loText = trim(text.substr(1, comma - 1));
  r.hiText = trim(text.substr(comma + 1, close - comma - 1));
  r.lo = r.loText == "inf" ? INFINITY : std::strtod(r.loText.c_str(), nullptr);
  r.hi = r.hiText == "inf" ? INFINITY : std::strtod(r.hiText.c_str(), nullptr);
  if (close + 2 < text.size())
    r.unit = text.substr(close + 2);
  return r;
}

std::string OptionRow::shownDefault() const {
  std::string d = defaultText;
  if (kind == OptionKind::Switch || kind == OptionKind::NoSwitch || d == "NULL" || d == "NAN")
    return "";
  if (d.size() >= 2 && d.front() == '"')
    return d.substr(1, d.size() - 2);
  OptionRange range = optionRange(*this);
  if (!range.isWords() && !range.contains(std::strtod(defaultText, nullptr)))
    return "";
  return d;
}

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_OPTIONS_H
