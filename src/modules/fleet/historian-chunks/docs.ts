/** The OpenAPI descriptions of the historian chunk routes (routes.ts); the policy sentence comes from `config.policy`. */
export const docs = {
  putChunk:
    "Stores chunk `{n}` (from 0) of the site server's historian batch `{batchId}`: the samples and a record that the chunk arrived, in one " +
    'transaction. The batch row follows through the push; its samples become visible when it arrives. `site` must be one of the site ' +
    "server's sites (else 403 `LinkSiteNotLinked`); every sample's instance must exist in that site (else 422 naming each sample); " +
    'samples ascend by instanceId, then tagKey (byte order), then ts, with no key twice (else 400). `sha256` is the lower-case hex ' +
    'SHA-256 of `JSON.stringify(samples)`; a mismatch (a corrupted or cut body) answers 400 `LinkChecksumMismatch`. A batch the cloud ' +
    'holds under another site, or that another site server sent, answers the uniform 404. The same chunk again stores nothing and ' +
    'answers the same (exactly once); the same number with another sample count answers 409. Nothing is stored on any refusal.',
  listChunks:
    "The chunk numbers of the site server's batch `{batchId}` received so far, ascending, their total samples, and `chunkSize`, the " +
    'samples of chunk 0 (null before it arrived): an uploader sends the other chunks, cut at that size. A batch nothing arrived of lists none.',
}
