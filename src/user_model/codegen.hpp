#pragma once
// The C++ a model file becomes: a model struct that satisfies the model concept (model.hpp),
// printed from the checked tree (never from the user's text), with every member the generator
// can derive (docs/models.md, "What a model file gets").
#include <string>

#include "saltation/user_model/spec.hpp"

namespace saltation::user_model {

// What the generator derived for a model, for `saltation model check` and the docs.
struct Derived {
  int flow_params = 0;             // F: the parameters the flow reads
  bool affine_flow = false;        // the flow is affine in q in every mode
  bool polynomial_guards = false;  // every guard is a polynomial in q (the curvature bound applies)
  bool analytic_events = true;     // guard gradients, R_q and event partials from symbolic derivatives
};
Derived derived_members(const ModelSpec& spec);

// The model struct `Model` in namespace `space`, with the headers it needs.
std::string model_header(const ModelSpec& spec, const std::string& space);

// A plugin's whole source: the struct, and the entry point (plugin_abi.hpp) answering `key`.
// With `cuda`, for nvcc: the CUDA driver too.
std::string plugin_source(const ModelSpec& spec, const std::string& key, bool cuda);

}  // namespace saltation::user_model
