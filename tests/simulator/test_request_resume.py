"""The simulated model builds a conversation's next request from where it parts from the
previous one (``TransformResume``, ``WireResume``, ``ConvertResume``, ``HeadResume``: issue 16): the body and
the parsed request are what building them whole gives, for conversations that grow, are cut,
are replaced, leave tool calls open, hold errors, null contents and images, and switch models."""

from __future__ import annotations

import marshal
import random
from typing import Any

import pytest

from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.scenario.chat_wire import ConvertMemo, ConvertResume, parse_chat_request
from pi_continuity_harness.simulator.provider import (
    HeadResume,
    TransformResume,
    WireMemo,
    WireResume,
    request_body,
    transform_messages,
)

MODELS = (
    Model("fake", "m1", 1000, 100),
    Model("fake", "m2", 1000, 100, input=("text", "image")),
    Model("other", "m1", 1000, 100),
)


class _Conversation:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.calls = 0

    def message(self) -> dict[str, Any]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.25:
            content = rng.choice(
                [
                    [{"type": "text", "text": "hi"}],
                    "text",
                    None,
                    [{"type": "image", "data": "x", "mimeType": "image/png"}],
                ]
            )
            return {"role": "user", "content": content}
        if roll < 0.55:
            calls = []
            for _ in range(rng.choice([0, 0, 1, 2])):
                self.calls += 1
                calls.append({"type": "toolCall", "id": f"c{self.calls}", "name": "bash", "arguments": {}})
            plain = [{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "a"}]
            return {
                "role": "assistant",
                "provider": rng.choice(["fake", "other"]),
                "api": "openai-completions",
                "model": "m1",
                "content": [{"type": "text", "text": "a"}, *calls] if calls else rng.choice([None, plain]),
                "stopReason": rng.choice(["stop", "stop", "error", "aborted", "toolUse"]),
            }
        if roll < 0.85:
            return {
                "role": "toolResult",
                "toolCallId": f"c{rng.randint(max(1, self.calls - 2), self.calls + 1)}",
                "toolName": "bash",
                "content": rng.choice(
                    [
                        [{"type": "text", "text": "out"}],
                        None,
                        [{"type": "image", "data": "x", "mimeType": "image/png"}],
                    ]
                ),
            }
        if roll < 0.95:
            if rng.random() < 0.5:  # (declaring a tool: the request's tools, HeadResume)
                tool = {"name": f"t{rng.randint(0, 2)}", "description": "d", "parameters": {}}
                return {"role": "system", "content": "update", "toolsAdded": [tool]}
            return {"role": "system", "content": "update"}
        return {"role": "custom", "content": "c"}

    def next(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.75:
            return messages + [self.message() for _ in range(rng.randint(0, 4))]
        if roll < 0.85 and messages:
            return messages[: rng.randint(0, len(messages))] + [
                self.message() for _ in range(rng.randint(0, 3))
            ]
        if roll < 0.9:
            return [self.message() for _ in range(rng.randint(0, 5))]
        return messages


@pytest.mark.parametrize("seed", range(40))
def test_transform_resumed_is_the_whole_transform(seed: int) -> None:
    conversation = _Conversation(seed)
    memo, resume = WireMemo(), TransformResume()
    messages: list[dict[str, Any]] = []
    for _ in range(25):
        messages = conversation.next(messages)
        head = [{"role": "system", "content": "prompt"}] if conversation.rng.random() < 0.8 else []
        model = conversation.rng.choice(MODELS)
        whole = transform_messages(head + messages, model, memo=WireMemo())
        assert transform_messages(head + messages, model, memo=memo, resume=resume) == whole


@pytest.mark.parametrize("seed", range(40))
def test_request_resumed_is_the_whole_request(seed: int) -> None:
    conversation = _Conversation(1000 + seed)
    known: dict[bytes, dict[str, Any]] = {}
    shared: dict[int, dict[str, Any]] = {}

    def share(message: dict[str, Any]) -> dict[str, Any]:  # as ScriptedModelService._share
        if shared.get(id(message)) is message:
            return message
        one = known.setdefault(marshal.dumps(message), message)
        shared[id(one)] = one
        return one

    wired, parsed = WireMemo(share=share), ConvertMemo(share=share)
    resumes = (TransformResume(), WireResume(), ConvertResume(), HeadResume())
    messages: list[dict[str, Any]] = []
    for _ in range(25):
        messages = conversation.next(messages)
        model = conversation.rng.choice(MODELS)
        prompt = conversation.rng.choice(["prompt", "prompt", None])
        whole = request_body(model, messages, system_prompt=prompt)
        body = request_body(
            model,
            messages,
            system_prompt=prompt,
            memo=wired,
            resume=resumes[0],
            wire_resume=resumes[1],
            head_resume=resumes[3],
        )
        body["messages"] = [share(m) for m in body["messages"]]
        assert body == whole
        request = parse_chat_request(body, memo=parsed, resume=resumes[2])
        expected = parse_chat_request(whole)
        assert (request.system_prompt, request.messages) == (expected.system_prompt, expected.messages)
