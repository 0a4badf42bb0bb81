#include "run/setup.h"

namespace chorus::train {

Setup::Setup(const TrainOptions& opt, Comm& w)
    : world(w),
      grid(w, opt.dp, opt.tp, opt.pp, opt.virtualStages, Device::current()),
      layout(opt.model, ModelPart::forStage(opt.model, opt.tp, grid.tpRank(), opt.pp, grid.stage(), opt.virtualStages),
             16 * static_cast<int64_t>(opt.dp)),
      control(w.duplicate()),
      normMask(layout, [this](const TensorSpec& t) {
        if (t.split == Split::kNone && grid.tpRank() != 0) return false;
        return !(t.name == "wte" && t.unit == layout.finalUnit() && layout.part().headHasOwnEmbedding);
      }) {
  DataParallelOptions dpo;
  dpo.zero = opt.zero;
  dpo.bucketElems = static_cast<int64_t>(opt.bucketMb * (1 << 20) / sizeof(float));
  dpo.bf16Comm = opt.gradCommDtype == "bf16";
  engine = DataParallel::create(dpo, layout, grid.dpGroup());
  UnitAccess<float>* access = engine.get();
  if (grid.tpGroup()) {
    tpOps = std::make_unique<TensorParallel>(*grid.tpGroup());
    if (opt.sequenceParallel) {
      spGrads = std::make_unique<SequenceParallelGrads>(*engine, layout, *grid.tpGroup());
      access = spGrads.get();
    }
  }
  pipeline = std::make_unique<Pipeline>(layout, grid, parseSchedule(opt.pipeSchedule), opt.batch, tpOps.get(),
                                        opt.sequenceParallel, *access);
}

void Setup::abandon() {
  world.abandon();
  control->abandon();
  for (Comm* c : engine->comms()) c->abandon();
  grid.abandon();
}

}  // namespace chorus::train
