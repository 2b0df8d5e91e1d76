/** Placeholder: replaced by the table scripts/graph.mjs generates (branch graph-table). */
export type GenericKind =
  | 'person'
  | 'hint'
  | 'sensitive'
  | 'anchorPoint'
  | 'range'
  | 'workstreamSummary'
  | 'workstreamPatternEngineSource'
  | 'workstreamPatternEngineSourceWindow';
export type MaterialKind = GenericKind;
