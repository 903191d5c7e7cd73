'use strict';

// The stage ids of one sidecar process or in-process session, mixed into
// SidecarClient and DirectSession: ids given back are reused first, so a
// stage left behind (its request was never sent) restarts, and empties,
// with the next upload under its id.
const stageIds = {
  takeStageId() {
    if (this.freeStageIds.length > 0) return this.freeStageIds.pop();
    this.stageSeq += 1;
    return `node-${this.stageSeq}`;
  },

  giveBackStageIds(ids) {
    for (const id of ids) if (id) this.freeStageIds.push(id);
  },
};

module.exports = { stageIds };
