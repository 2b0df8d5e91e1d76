/**
 * The data format of `seed(data)` and `exportData()`: the whole store as one JSON document in wire
 * shapes, ids and times kept as given (docs/testing.md, "Data format").
 */
export { parseData } from './data/parse.js';
export { toData } from './data/export.js';
export type { PiecesData, PiecesSeed } from './data/format.js';
