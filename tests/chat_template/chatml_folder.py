# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The bundled demo model (models/word-problems, which ships no tokenizer_config.json) as a model
folder with a chat template, for the tests of "template": "model" and `baton serve --model`:
its files linked, and a tokenizer_config.json with a ChatML template written here (every role,
add_generation_prompt) and eos_token <|im_end|>."""
import json
import os
import shutil

CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
          "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def chatml_folder(demo, folder, links=()):
    """Makes `folder` (emptied first) from `demo`'s weights, config and tokenizer, and `links`
    (more of its files or folders); returns it."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name in ["config.json", "model.safetensors", "tokenizer.json", *links]:
        os.symlink(os.path.abspath(os.path.join(demo, name)), os.path.join(folder, name))
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"chat_template": CHATML, "eos_token": "<|im_end|>", "bos_token": None}, f)
    return folder
