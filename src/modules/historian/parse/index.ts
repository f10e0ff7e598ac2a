// Public API of historian export parsing; everything else in this folder is internal.
export { parseAll, parseStream } from './parse-stream.ts'
export type { HistorianParse } from './parse-stream.ts'
export { parseMappingCsv } from './mapping.ts'
export type { TagMapping } from './mapping.ts'
export { readCsvBatches } from './csv.ts'
export type { CsvOptions, CsvRow } from './csv.ts'
export { detectFormat } from './detect.ts'
export { FORMAT_DEFAULTS, checkOptions } from './options.ts'
export type { DateOrder, DecimalMark, FormatDefaults, ParseOptions, QualityScale, Separator } from './options.ts'
export {
  HistorianCsvInvalid,
  HistorianFormatUndetected,
  HistorianHeaderInvalid,
  HistorianMappingInvalid,
  HistorianParseError,
} from './errors.ts'
export type { HistorianParseErrorCode, MappingProblem } from './errors.ts'
export { FORMAT_NAMES } from './types.ts'
export type { ByteSource, FormatName, ParseSummary, Quality, Rejection, Sample } from './types.ts'
export type { SampleBatch } from './sink.ts'
