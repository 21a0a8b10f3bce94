//===- Recipe.cpp - the train block: loss, optimizer and their settings ---===//
//
// A `train { }` block makes a .tcc file a complete training recipe. Its keys
// are the names of tcc's training flags with underscores (weight_decay is
// --weight-decay); the driver applies them first and its own flags on top.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/Sema.h"
#include "passes/training/TrainingOptions.h"
#include "passes/training/TrainingSettings.h"

using namespace tcc::dsl;

namespace {

enum class KeyKind { Word, Number, Integer, Flag, Words };

struct Key {
  tcc::TrainingSetting setting;
  KeyKind kind;
  std::vector<std::string> choices; ///< for words: the allowed values, if limited
  llvm::StringRef name() const { return tcc::trainingSettingKey(setting); }
};

llvm::ArrayRef<Key> keys() {
  using S = tcc::TrainingSetting;
#define TCC_SPELLING(e, name, help) name,
  static const Key table[] = {
      {S::Loss, KeyKind::Word, {TCC_LOSSES(TCC_SPELLING)}},
      {S::Optimizer, KeyKind::Word, {TCC_OPTIMIZERS(TCC_SPELLING)}},
      {S::Labels, KeyKind::Word, {}},
      {S::Momentum, KeyKind::Number, {}},
      {S::Dampening, KeyKind::Number, {}},
      {S::Nesterov, KeyKind::Flag, {}},
      {S::WeightDecay, KeyKind::Number, {}},
      {S::Beta1, KeyKind::Number, {}},
      {S::Beta2, KeyKind::Number, {}},
      {S::Eps, KeyKind::Number, {}},
      {S::GradClip, KeyKind::Number, {}},
      {S::GradAccum, KeyKind::Integer, {}},
      {S::IgnoreIndex, KeyKind::Integer, {}},
      {S::LabelSmoothing, KeyKind::Number, {}},
      {S::Freeze, KeyKind::Words, {}},
  };
#undef TCC_SPELLING
  static_assert(std::size(table) == tcc::kNumTrainingSettings,
                "every training setting is a key of the train block");
  return table;
}

/// The recipe's field for a setting of KeyKind::Number.
std::optional<double> *numberField(Recipe &r, tcc::TrainingSetting setting) {
  using S = tcc::TrainingSetting;
  switch (setting) {
  case S::Momentum:
    return &r.momentum;
  case S::Dampening:
    return &r.dampening;
  case S::WeightDecay:
    return &r.weightDecay;
  case S::Beta1:
    return &r.beta1;
  case S::Beta2:
    return &r.beta2;
  case S::Eps:
    return &r.eps;
  case S::GradClip:
    return &r.gradClip;
  default:
    return &r.labelSmoothing;
  }
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
    names.push_back(k.name().str());
  for (const TrainDecl &block : program.trains) {
    for (const TrainEntry &entry : block.entries) {
      auto key = llvm::find_if(keys(), [&](const Key &k) { return entry.key.name == k.name(); });
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
      std::string name = key->name().str();
      using S = tcc::TrainingSetting;
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
        if (key->setting == S::Loss) r.loss = words[0];
        else if (key->setting == S::Optimizer) r.optimizer = words[0];
        else if (key->setting == S::Labels) r.labels = words[0];
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
        (key->setting == S::GradAccum ? r.gradAccum : r.ignoreIndex) = int64_t(*number);
      } else {
        *numberField(r, key->setting) = *number;
      }
    }
  }
  return r;
}
