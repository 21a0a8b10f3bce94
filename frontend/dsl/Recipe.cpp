//===- Recipe.cpp - the train block: loss, optimizer and their settings ---===//
//
// A `train { }` block makes a .tcc file a complete training recipe. Its keys
// are the names of tcc's training flags with underscores (weight_decay is
// --weight-decay); the driver applies them first and its own flags on top.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/Sema.h"

using namespace tcc::dsl;

namespace {

enum class KeyKind { Word, Number, Integer, Flag, Words };

struct Key {
  const char *name;
  KeyKind kind;
  std::vector<std::string> choices; ///< for words: the allowed values, if limited
};

const std::vector<Key> &keys() {
  static const std::vector<Key> table = {
      {"loss", KeyKind::Word, {"mse", "cross_entropy", "none"}},
      {"optimizer", KeyKind::Word, {"sgd", "adam", "adamw"}},
      {"labels", KeyKind::Word, {}},
      {"momentum", KeyKind::Number, {}},
      {"dampening", KeyKind::Number, {}},
      {"nesterov", KeyKind::Flag, {}},
      {"weight_decay", KeyKind::Number, {}},
      {"beta1", KeyKind::Number, {}},
      {"beta2", KeyKind::Number, {}},
      {"eps", KeyKind::Number, {}},
      {"grad_clip", KeyKind::Number, {}},
      {"grad_accum", KeyKind::Integer, {}},
      {"ignore_index", KeyKind::Integer, {}},
      {"label_smoothing", KeyKind::Number, {}},
      {"freeze", KeyKind::Words, {}},
  };
  return table;
}

/// A number literal, possibly negated.
std::optional<double> numberOf(const Expr &e, bool &isInt) {
  if (auto *n = llvm::dyn_cast<NumberExpr>(&e)) {
    isInt = n->isInt;
    return n->isInt ? double(n->intValue) : n->floatValue;
  }
  if (auto *u = llvm::dyn_cast<UnaryExpr>(&e); u && u->op == Tok::Minus)
    if (std::optional<double> v = numberOf(*u->operand, isInt))
      return -*v;
  return std::nullopt;
}

} // namespace

Recipe tcc::dsl::readRecipe(const Program &program, Diagnostics &diags) {
  Recipe r;
  std::vector<std::string> names;
  for (const Key &k : keys())
    names.push_back(k.name);
  for (const TrainDecl &block : program.trains) {
    for (const TrainEntry &entry : block.entries) {
      auto key = llvm::find_if(keys(), [&](const Key &k) { return entry.key.name == k.name; });
      if (key == keys().end()) {
        std::string near = closestName(entry.key.name, names);
        auto d = diags.error(entry.key.pos) << "unknown training setting '" << entry.key.name << "'";
        if (!near.empty())
          d << "; did you mean '" << near << "'?";
        continue;
      }
      const Expr &value = *entry.value;
      bool isInt = false;
      std::optional<double> number = numberOf(value, isInt);
      auto *word = llvm::dyn_cast<NameExpr>(&value);
      std::string name = key->name;
      if (key->kind == KeyKind::Word || key->kind == KeyKind::Words) {
        std::vector<std::string> words;
        if (word)
          words.push_back(word->name);
        else if (auto *list = llvm::dyn_cast<ListExpr>(&value); list && key->kind == KeyKind::Words)
          for (const ExprPtr &e : list->elems)
            if (auto *w = llvm::dyn_cast<NameExpr>(e.get()))
              words.push_back(w->name);
        if (words.empty()) {
          diags.error(value.pos) << "'" << name << "' takes a name, such as "
                                 << (key->choices.empty() ? "y" : key->choices[0]);
          continue;
        }
        if (!key->choices.empty() && !llvm::is_contained(key->choices, words[0])) {
          std::string near = closestName(words[0], key->choices);
          auto d = diags.error(value.pos) << "unknown " << name << " '" << words[0] << "'";
          if (!near.empty())
            d << "; did you mean '" << near << "'?";
          continue;
        }
        if (name == "loss") r.loss = words[0];
        else if (name == "optimizer") r.optimizer = words[0];
        else if (name == "labels") r.labels = words[0];
        else r.freeze = words;
      } else if (key->kind == KeyKind::Flag) {
        auto *b = llvm::dyn_cast<BoolExpr>(&value);
        if (!b) {
          diags.error(value.pos) << "'" << name << "' is true or false";
          continue;
        }
        r.nesterov = b->value;
      } else if (!number || (key->kind == KeyKind::Integer && !isInt)) {
        diags.error(value.pos) << "'" << name << "' takes "
                               << (key->kind == KeyKind::Integer ? "an integer" : "a number");
      } else if (key->kind == KeyKind::Integer) {
        (name == "grad_accum" ? r.gradAccum : r.ignoreIndex) = int64_t(*number);
      } else {
        std::optional<double> *slot = name == "momentum"       ? &r.momentum
                                      : name == "dampening"    ? &r.dampening
                                      : name == "weight_decay" ? &r.weightDecay
                                      : name == "beta1"        ? &r.beta1
                                      : name == "beta2"        ? &r.beta2
                                      : name == "eps"          ? &r.eps
                                      : name == "grad_clip"    ? &r.gradClip
                                                               : &r.labelSmoothing;
        *slot = *number;
      }
    }
  }
  return r;
}
