# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""transformers' prompt ids for test_serve_model.py (run by $BATON_CHAT_TEMPLATE_PYTHON).

  model_reference_ids.py MODEL_DIR IN.json OUT.json

IN.json: {"chats": [messages, ...], "prompts": [text, ...]}. OUT.json: for each chat,
apply_chat_template(tokenize=True, add_generation_prompt=True); where a message spells the
tokenizer's control tags, the same conversation with each content encoded as plain text
(reference_ids.split_reference, the chat template tests' reference), plus "as_control": the ids
transformers gives when those tags are control tokens (they must differ). For each prompt,
tokenizer(prompt) with its special tokens and the text as text (split_special_tokens=True).
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "chat_template"))
from reference_ids import split_reference  # noqa: E402

from transformers import AutoTokenizer  # noqa: E402


def ids_of(x):
    return list(x["input_ids"] if isinstance(x, dict) or hasattr(x, "keys") else x)


def main():
    model, src, out = sys.argv[1:4]
    tok = AutoTokenizer.from_pretrained(model)
    specials = [t.content for t in tok.added_tokens_decoder.values() if t.special]
    job = json.loads(Path(src).read_text(encoding="utf-8"))
    chats = []
    for messages in job["chats"]:
        # transformers' templates take string content: the request's text parts, joined.
        flat = [dict(m, content=m["content"] if isinstance(m["content"], str) else
                     "".join(p["text"] for p in m["content"])) for m in messages]
        control = ids_of(tok.apply_chat_template(flat, tokenize=True, add_generation_prompt=True))
        if any(t in m["content"] for m in flat for t in specials):
            chats.append({"ids": split_reference(tok, {"messages": flat}, True),
                          "as_control": control})
        else:
            chats.append({"ids": control})
    prompts = [tok(p, split_special_tokens=True)["input_ids"] for p in job["prompts"]]
    Path(out).write_text(json.dumps({"chats": chats, "prompts": prompts}), encoding="utf-8")


if __name__ == "__main__":
    main()
