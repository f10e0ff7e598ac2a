import { MAX_JSON_POINTS } from './service/series.ts'

/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  importHistorianExport:
    "`multipart/form-data` (spec 4.3). Parts: `site_id` (the site's code), `format` (auto, long, wide, ignition-tall, aveva-history, proficy, citect-pa, " +
    'piconfig), `trend_csv` (file), `mapping_csv` (file: historian_tag,instance_id,tag_key[,unit][,scale]), optional `force`, `dryRun`, `timezone` (IANA; ' +
    "default the site's), `separator` (, ; tab), `decimal` (. ,), `dateOrder` (dmy mdy ymd), `qualityScale` (percent opc), `sentinels` (comma-separated), " +
    '`maxRejections`. Send `trend_csv` last to have it streamed straight into the database (otherwise it waits in a temporary file). All or nothing: ' +
    'the batch becomes visible when complete; any failure keeps none of its samples. The same two files for the same site again: ' +
    '409 naming the earlier batch unless force=true (latest value wins; each batch whose values it replaced gets a new `updatedAt`). `dryRun=true` answers 200 with the report and stores nothing; with a `mapping_csv` of the header alone it lists the ' +
    "file's tags (the first 1 000) and their rows in `unmappedTags`, which the console's mapping editor starts from (`maxRejections=0` keeps the report short). " +
    'Every value read has one outcome, counted: stored, collided, rejected (with its reason), duplicate in the file, sentinel or empty (`valuesRead` is ' +
    'their sum). Local times are read in `timezone`: a wall time of the repeated hour of a fall-back change is the first pass (the earlier offset: ' +
    '+02:00 CEST in Europe/Paris) until its series goes back in time or lists that wall time again, then the second pass (+01:00 CET), so both 02:30 rows of ' +
    'that night are kept, in file order; a wall time in the spring-forward gap does not exist and its row is rejected (`local time … does not exist in …`). ' +
    'Files are UTF-8 (a BOM is skipped; lines end in LF, CRLF or CR alone): a byte that is not UTF-8, UTF-16 or a NUL is 422 `HistorianCsvInvalid` ' +
    'naming the file and line, and a header naming a required column twice 422 `HistorianHeaderInvalid`. A value past the largest double (`1e400`) and ' +
    'a time outside 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z once in UTC are rejected rows. ' +
    'A file over SITEGRID_HISTORIAN_MAX_FILE_BYTES, or more parts than the form holds (each field and file once): 413, nothing kept.',
  listImportBatches:
    'Paged, newest first; running and failed batches included. Each batch as a summary: the lists that grow with the file (tags covered, unmapped tags, the ' +
    'first rejections and collisions) are counted (`tagCount`, `unmappedTagCount`, `count`); `GET …/{batchId}` lists them.',
  readImportBatch:
    'With `progress` while it runs. A `running` batch whose import process is gone (PostgreSQL: ' +
    "its connection's lock is free) is marked `failed`, its samples removed, when read here or in the list.",
  downloadRejectionReport: 'The first rejected rows and why (JSON; `?as=csv` for `line,column,reason`).',
  listCollisions:
    'Samples of the batch that met a value already stored at the same instance, tag and timestamp: ' +
    'which instance and tag, the timestamp, the value kept and the value discarded (`keptStored` without force: the earlier value stays; ' +
    '`replacedStored` with force: latest value wins). Every collision is counted (`count`); ' +
    'the first 1 000 are listed, paged with `limit` (1 to 1 000, default 100) and `cursor`.',
  pushLiveSamples:
    'Live samples from a gateway (API keys only), into the same series as imports, visible to reads once answered. `batchKey` (query), chosen by ' +
    "the gateway: a resend of a batchKey already pushed to the site (after a timeout, or many at once) stores nothing and answers the first push's " +
    'counts with `replayed: true`. JSON: `{ samples: [{ instanceId, tagKey, ts, value | text, quality }] }`. Lines (`text/plain` or `text/csv`, ' +
    'UTF-8): one sample a line, `instance,tagKey,timestamp,value[,quality]`, LF or CRLF, empty lines skipped; timestamp in epoch milliseconds or ' +
    'ISO 8601 with Z or an offset; an unquoted value is a number, a double-quoted one a text state; quality `good`, `uncertain`, `bad` or an OPC ' +
    'code 0–255 (default good); a field holding a comma or a double quote is double-quoted, its quotes doubled; no line breaks inside a field; ' +
    'the fields as long as the JSON allows (instance 100 characters, tagKey 200, timestamp 40, text 1 000), a longer one refuses its line. ' +
    'At most SITEGRID_HISTORIAN_LIVE_MAX_SAMPLES samples (413 above, nothing stored); a push of none (an empty array, a body of no lines) is a 422 ' +
    "naming `/samples` and makes no batch. Refused one by one, with their index (the array's, or the " +
    "line's from 0) and the reason, the others stored: an instance not in the site, a tag key not in the instance's `tagMappings`, a timestamp " +
    'more than SITEGRID_HISTORIAN_LIVE_MAX_SKEW_MS ahead of the server or more than SITEGRID_HISTORIAN_LIVE_MAX_AGE_MS behind it, an unreadable ' +
    'line or value. A sample at a tag and timestamp already stored (an import, an earlier push) keeps the stored value and counts as a duplicate, ' +
    'as does the earlier of two in one push. `stored + duplicates + refused = received`. The samples go into a historian batch of format `live` ' +
    '(`historianBatchId`; deleting it deletes them), one per gateway (its API key), site and 10-minute UTC window (:00, :10, … of each hour): ' +
    'the pushes of a window share it, with status `open` (a sitegrid extension: its samples are read at once, its counts and coverage grow with ' +
    'each push, the fleet link leaves it alone). The first push of that gateway after the window closes it (`complete`) and opens the next; ' +
    'a periodic job closes the others, so a batch stays open at most about a minute past its window while the server runs.',
  readRetention:
    "The site's `retentionDays` (null: every sample kept) and the retention job's progress: its last run over the site, the samples that run deleted, the oldest sample kept.",
  setRetention:
    'Samples older than `retentionDays` days (any batch, imported or live) are deleted by a background job every SITEGRID_HISTORIAN_RETENTION_INTERVAL_MS, ' +
    'in statements of at most 5 000 samples, each its own short transaction: imports and reads are never blocked for long. `null` keeps every ' +
    "sample. The batches' own counts stay as they were imported. Answers the policy and the progress so far.",
  listTagMarks:
    "The site's tags with a stored interpolation (`step`: a discrete tag such as a valve's open/closed state, each value held until the next; " +
    '`linear`), by instance id then tag key, paged. An unmarked tag is read linearly.',
  setTagMark:
    "Stores the tag's interpolation: the series reads (`GET …/historian/series`, `POST …/series/query`: `interpolated`, `at` and the " +
    "time-weighted average of `aggregate`) use it when the query names no `interpolation`; one the query names still wins. The tag key must be one of the instance's " +
    '`tagMappings` (422 naming `tag` otherwise); an unknown site or instance is 404. Deleted with its instance.',
  deleteTagMark: '204: the tag is read linearly again unless the query says otherwise (also when it had no mark). An unknown site or instance is 404.',
  deleteImportBatch: '204. A running batch answers 409. Values a forced batch replaced are not restored.',
  readTagHistory:
    'Samples of complete batches in [from, to), in one of five modes, each computed in the database. `raw`: the samples, every quality and text ' +
    'states included. The others read the numeric samples of good or uncertain quality (bad, under 64, only with `includeBad=true`) as a signal: ' +
    'joined linearly, or held until the next sample (a discrete tag): `interpolation` (`linear` or `step`) when the query gives it, else the ' +
    "tag's stored mark (`PUT …/historian/tags/{instanceId}/{tag}`), else linear; the last value " +
    'held after the last sample, nothing (null) before the first; an excluded sample is bridged by its neighbours. `aggregate` (`bucket`): per ' +
    'bucket min, max, mean, first, last, count and the sample standard deviation (n − 1) of its samples, and the time-weighted average of the signal ' +
    'over the bucket within [from, to) (its integral over the part after the first sample, divided by that length); bucket starts are multiples ' +
    'of the width since 1970-01-01T00:00Z, empty buckets are absent. `interpolated` (`interval`, `from`, `to`): the signal at `from` + k · interval, ' +
    "an interval in days (`1d`) stepping local days in `timezone` (default the site's: 23 or 25 hours across a DST change). `at` (`at`): the " +
    'signal at one time. `plot` (`width`, `from`, `to`): [from, to) cut into `width` columns, in each the first, last, lowest and highest sample ' +
    '(at most 4 a column, the shape kept). Paged by `cursor` (`plot`: one page). `format=csv`: every row from `cursor` on, streamed as ' +
    "`instanceId,tag,` and the mode's fields, read 5 000 rows at a time; a text a spreadsheet would run as a formula (starting with `=`, " +
    "`+`, `-`, `@`, a tab or a carriage return) is written with a `'` before it, numbers as they are. A field a mode does not use, or one it " +
    'lacks, is a 400 naming it.',
  readManyTagsHistory:
    'The options of `GET …/historian/series` for 1 to 100 instance/tag pairs (`series`; `interpolation` per pair overrides the shared one, ' +
    "which overrides each tag's stored mark): " +
    'the first page of each (`limit` rows a tag), in the order asked, each with its `nextCursor` for `GET …/series`; with `format=csv` every row ' +
    'of each tag in turn, in one CSV streamed. A pair named twice is a 400 naming it; a pair without samples answers empty. As JSON the ' +
    `answer holds at most ${MAX_JSON_POINTS} points (pairs × \`limit\`, × 4 a column of \`width\` in \`plot\`): past it, a 400 naming ` +
    '`limit` (`width`); the CSV form has no such bound.',
}
