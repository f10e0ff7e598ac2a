/** The OpenAPI descriptions of the historian chunk routes (routes.ts); the policy sentence comes from `config.policy`. */
export const docs = {
  putChunk:
    "Stores chunk `{n}` (from 0) of the site server's historian batch `{batchId}`: the samples, a record that the chunk arrived and its " +
    '`sha256`, in one transaction. The batch row follows through the push; its samples become visible when it arrives. `site` must be one ' +
    "of the site server's sites (else 403 `LinkSiteNotLinked`); every sample's instance must exist in that site (else 422 naming each " +
    "sample); a tagKey has 1 to 200 characters, as an instance's `tagMappings` keys, and samples ascend by instanceId, then tagKey " +
    '(byte order), then ts, with no key twice (else 400). `sha256` is the lower-case ' +
    'hex SHA-256 of `JSON.stringify(samples)`; a mismatch (a corrupted or cut body) answers 400 `LinkChecksumMismatch`. A batch the cloud ' +
    'holds under another site, or that another site server sent, answers the uniform 404. The same chunk again stores nothing and ' +
    'answers the same (exactly once); the same number with other samples (another count or digest) answers 409: the batch changed on ' +
    'the site, and its upload starts again (DELETE). Nothing is stored on any refusal.',
  listChunks:
    "The chunk numbers of the site server's batch `{batchId}` received so far, ascending, the `sha256` of each (`digests`), their " +
    'total samples, and `chunkSize`, the samples of chunk 0 (null before it arrived): an uploader cuts its chunks at that size and ' +
    'skips a chunk listed here only when its own chunk of that number has the same digest. Chunk n means the samples at positions ' +
    "n·chunkSize onwards of the batch's order, which move when the batch's sample set changes on the site (a forced import of " +
    'another batch takes some over): then a digest differs and the upload starts again from chunk 0 (DELETE). A batch nothing ' +
    'arrived of lists none.',
  restartChunks:
    "Starts the upload of the site server's batch `{batchId}` again from chunk 0: forgets the chunks received, in one " +
    'transaction, and answers the empty listing. An uploader calls it when a chunk it would skip has another digest than the ' +
    "cloud's (the batch's samples changed on the site since), then sends every chunk: the cloud ends with exactly the samples " +
    "the site attributes to the batch, none skipped and none the site moved to another batch (that batch's own upload brings " +
    'them). A batch the cloud does not show yet (its row has not arrived) loses its samples in the cloud here. One it shows keeps ' +
    "them: each new chunk replaces the batch's samples between the previous chunk's last sample and its own, and the batch row's " +
    'next arrival removes those past the last chunk, so readers never see fewer samples than either version has. `site` must be ' +
    "one of the site server's sites (else 403 `LinkSiteNotLinked`); a batch the cloud holds under another site, or that another " +
    'site server sent, answers the uniform 404, removing nothing. Calling it again changes nothing more.',
}
