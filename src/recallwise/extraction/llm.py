"""The LLM extractor: any OpenAI-compatible chat endpoint or a Bedrock model does the reading.

The prompts live in package data (``recallwise/extraction/prompts/``). The model answers
with one JSON object ``{"facts": [{"text", "topic"}], "preferences": [{"context",
"preference", "categories", "topic"}]}``; anything else raises
:class:`~recallwise.extraction.base.ExtractionError` naming the session, never a silent
empty result.

>>> extractor = LLMExtractor(OpenAIChat("gpt-4o-mini"))                  # OPENAI_API_KEY
>>> extractor = LLMExtractor(OpenAIChat("llama3.1", base_url="http://localhost:11434/v1"))
>>> extractor = LLMExtractor(BedrockChat("anthropic.claude-3-5-haiku-20241022-v1:0"))
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any, Protocol

import httpx

from ..extras import require_extra
from ..http import ErrorTypes, HttpSettings, JsonClient
from ..records import Event
from .base import PREFERENCE, SEMANTIC, ExtractedMemory, ExtractionError

__all__ = ["BedrockChat", "ChatModel", "LLMExtractor", "OpenAIChat", "parse_extraction", "prompt"]


class ChatModel(Protocol):
    """One chat completion: a system prompt and a user message in, the reply text out."""

    name: str

    def complete(self, system: str, user: str) -> str: ...


@lru_cache(maxsize=4)
def prompt(name: str) -> str:
    """A shipped prompt (``extract_system`` or ``extract_user``)."""
    path = resources.files("recallwise.extraction").joinpath(f"prompts/{name}.txt")
    return path.read_text(encoding="utf-8")


#: Every failure of the chat endpoint is an extraction error (with ``backend_kind`` and ``status``).
_EXTRACTION_ERRORS = ErrorTypes(ExtractionError, ExtractionError, ExtractionError)


class OpenAIChat:
    """An OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, vLLM, Ollama, LM Studio, ...).

    It talks through recallwise's one HTTP client (:class:`~recallwise.http.JsonClient`):
    ``timeout`` bounds the whole call, a connection that never opened is retried, and a
    request the server may have answered (and billed) is never sent twice. ``transport``
    replaces the network (``httpx.MockTransport`` in tests).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        temperature: float = 0.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip(
            "/"
        )
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.temperature = temperature
        settings = HttpSettings(
            total_timeout=float(timeout), connect_timeout=min(5.0, float(timeout)), retry_disconnects=False
        )
        self._http = JsonClient(self.name, settings, transport=transport, errors=_EXTRACTION_ERRORS)

    def complete(self, system: str, user: str) -> str:
        body = {
            "model": self.model,
            "temperature": self.temperature,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        url = f"{self.base_url}/chat/completions"
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        answer = self._http.post(url, body, headers).body
        try:
            content = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ExtractionError(
                f"{self.name}: unexpected response shape from {url}: {json.dumps(answer)[:300]}"
            ) from exc
        if not isinstance(content, str):
            raise ExtractionError(f"{self.name}: the reply has no text content")
        return content

    def close(self) -> None:
        self._http.close()


class BedrockChat:
    """A Bedrock model through the ``Converse`` API (needs boto3; AWS credentials as usual)."""

    def __init__(
        self,
        model_id: str,
        *,
        region: str | None = None,
        boto_session: Any = None,
        max_tokens: int = 2000,
        temperature: float = 0.0,
    ) -> None:
        require_extra("agentcore", "BedrockChat", ("boto3",))
        import boto3

        session = boto_session or boto3.Session(region_name=region)
        self._client = session.client("bedrock-runtime", region_name=region or session.region_name)
        self.model_id = model_id
        self.name = f"bedrock:{model_id}"
        self.max_tokens = max_tokens
        self.temperature = temperature

    def complete(self, system: str, user: str) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self._client.converse(
                modelId=self.model_id,
                system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": user}]}],
                inferenceConfig={"maxTokens": self.max_tokens, "temperature": self.temperature},
            )
        except (ClientError, BotoCoreError) as exc:
            raise ExtractionError(f"{self.name}: {exc}") from exc
        blocks = response.get("output", {}).get("message", {}).get("content", [])
        text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict))
        if not text:
            raise ExtractionError(f"{self.name}: the reply has no text content")
        return text


def _conversation(events: Sequence[Event]) -> str:
    lines = []
    for event in events:
        text = " ".join(event.text.split())
        if text:
            lines.append(f"{event.role.upper()}: {text}")
    return "\n".join(lines)


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


def parse_extraction(reply: str, *, where: str = "") -> list[ExtractedMemory]:
    """Parse and check a model's extraction reply; raise :class:`ExtractionError` naming the problem."""
    label = f" ({where})" if where else ""
    text = _FENCE.sub("", reply.strip())
    if not text.startswith("{"):
        start, end = text.find("{"), text.rfind("}")
        text = text[start : end + 1] if 0 <= start < end else text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ExtractionError(f"model reply{label} is not JSON: {reply[:200]!r}") from exc
    if not isinstance(data, dict):
        raise ExtractionError(f"model reply{label} is not a JSON object")
    memories: list[ExtractedMemory] = []
    for index, item in enumerate(data.get("facts") or []):
        text_value = item.get("text") if isinstance(item, dict) else None
        if not isinstance(text_value, str) or not text_value.strip():
            raise ExtractionError(f"model reply{label}: facts[{index}] has no 'text'")
        topic = item.get("topic")
        memories.append(
            ExtractedMemory(
                SEMANTIC, text_value.strip(), key=topic.strip().lower() if isinstance(topic, str) else None
            )
        )
    for index, item in enumerate(data.get("preferences") or []):
        if not isinstance(item, dict):
            raise ExtractionError(f"model reply{label}: preferences[{index}] is not an object")
        context, preference = item.get("context"), item.get("preference")
        if not isinstance(context, str) or not context.strip():
            raise ExtractionError(f"model reply{label}: preferences[{index}] has no 'context'")
        if not isinstance(preference, str) or not preference.strip():
            raise ExtractionError(f"model reply{label}: preferences[{index}] has no 'preference'")
        categories = item.get("categories") or []
        if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
            raise ExtractionError(
                f"model reply{label}: preferences[{index}].categories is not a list of strings"
            )
        topic = item.get("topic")
        memories.append(
            ExtractedMemory(
                PREFERENCE,
                preference.strip(),
                key=topic.strip().lower() if isinstance(topic, str) else None,
                context=context.strip(),
                categories=[c.strip().lower() for c in categories if c.strip()],
            )
        )
    return memories


class LLMExtractor:
    """Extraction by a chat model, one call per session."""

    def __init__(self, model: ChatModel, *, max_chars: int = 24_000) -> None:
        self.model = model
        self.name = f"llm:{model.name}"
        self.max_chars = max_chars

    def extract(self, events: Sequence[Event]) -> list[ExtractedMemory]:
        conversation = _conversation(events)
        if not conversation:
            return []
        where = f"session {events[0].session_id!r}"
        if len(conversation) > self.max_chars:  # keep the newest turns: they win conflicts anyway
            conversation = conversation[-self.max_chars :]
        user = prompt("extract_user").replace("{conversation}", conversation)
        reply = self.model.complete(prompt("extract_system"), user)
        memories = parse_extraction(reply, where=where)
        ids = [e.id for e in events if e.role.lower() == "user"]
        for memory in memories:
            memory.source_event_ids = ids
            memory.session_id = events[0].session_id
        return memories
