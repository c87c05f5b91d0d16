/**
 * The release this code is (CHANGELOG): release 2 dropped the pinned flows' markers, so a build of
 * release 1 cannot replay a pinned flow of release 2; release 3 pinned the entity workflows and moved
 * them at a continue-as-new, which a build of release 2 would not replay; release 4 pins every
 * workflow type and dropped every marker (temporal/marker-gate.ts says when it may take flows). A
 * version's workers record their release in the version's metadata (temporal/deployments.ts); and a
 * long-lived run moves at a continue-as-new only to a build of its own release or a later one
 * (workflows/lib/roll-over.ts): an earlier release may not read what the run carries. Pure: workflow
 * code imports it.
 */
export const RELEASE = 4;
