"""An OpenAI-compatible chat endpoint as the returning agent's reader (and STALE/Memora judge).

Configured with ``MODEL@BASE_URL`` (``--llm`` or ``READMIT_BENCH_LLM``) and an
optional key in ``READMIT_BENCH_API_KEY``. Without one, answer-level metrics that
need language understanding are reported as not computed.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from readmit.admission.context import ReturnContext
from readmit.bench import metrics
from readmit.bench.episode import Episode
from readmit.bench.methods import MethodView
from readmit.errors import VerifierUnavailable
from readmit.verifiers.client import Endpoint, endpoint

SYSTEM = (
    "You are an assistant returning to a shared workspace. Answer from the context "
    "you are given; it is what you may still rely on."
)


@dataclass
class ChatModel(Endpoint):
    """A chat-completions endpoint (vLLM, Ollama, llama.cpp server, hosted APIs)."""

    timeout: float = 120.0

    @property
    def name(self) -> str:
        return f"--llm {self.model}@{self.base_url}"

    @classmethod
    def parse(cls, spec: str, env: Mapping[str, str]) -> "ChatModel":
        """``MODEL@URL``, e.g. ``qwen2.5:7b@http://127.0.0.1:11434/v1``.

        Raises:
            ConfigError: if the spec has no ``@``.
        """
        model, url = endpoint(spec, "--llm")
        return cls(model=model, base_url=url, api_key=env.get("READMIT_BENCH_API_KEY"))

    def complete(self, prompt: str, max_tokens: int = 256) -> str:
        """One deterministic completion (temperature 0).

        Raises:
            VerifierUnavailable: when no answer comes after bounded retries (the runner
                scores the episode as failed).
        """
        body = self.client.post(
            "/chat/completions",
            {
                "model": self.model,
                "temperature": 0,
                "max_tokens": max_tokens,
                "messages": [
                    {"role": "system", "content": SYSTEM},
                    {"role": "user", "content": prompt},
                ],
            },
        )
        try:
            return str(body["choices"][0]["message"]["content"]).strip()
        except (KeyError, IndexError, TypeError) as exc:
            raise VerifierUnavailable(f"{self.client.name}: malformed completion: {exc!r}") from exc

    def reader(self, episode: Episode, ctx: ReturnContext, view: MethodView) -> list[str | None]:
        """Answer each probe from the method's context; multiple choice when options exist."""
        memories = {e.id: e.text for e in ctx.experiences}
        context = [ctx.by_id[i].text for i in view.items if i in ctx.by_id]
        context += [memories[m] for m in view.memories if m in memories]
        answers: list[str | None] = []
        for probe in episode.probes:
            prompt = "Context:\n" + "\n".join(f"- {c}" for c in context) + f"\n\n{probe.question}"
            if probe.options:
                prompt += "\nAnswer with exactly one of: " + " | ".join(probe.options)
            reply = self.complete(prompt)
            answers.append(_choice(reply, probe.options) if probe.options else reply)
        return answers

    def judge(self, question: str, response: str, criterion: str) -> bool:
        """Whether ``response`` to ``question`` meets ``criterion`` (a yes/no judgment)."""
        verdict = self.complete(
            f"Question: {question}\nResponse: {response}\nCriterion: {criterion}\n"
            "Does the response meet the criterion? Answer yes or no.",
            max_tokens=4,
        )
        return verdict.lower().startswith("yes")


def _choice(reply: str, options: Sequence[str]) -> str | None:
    lowered = reply.lower()
    hits = [o for o in options if o.lower() in lowered]
    return max(hits, key=len) if hits else None


def stale_criteria(judge: Mapping[str, str]) -> tuple[str, str, str]:
    """The three STALE probe criteria (SR, PR, IPA) for a judge that sees M_old and M_new."""
    old, new = judge["M_old"], judge["M_new"]
    return (
        f"The response recognizes that this no longer holds: {old!r}, given: {new!r}.",
        f"The response does not accept the outdated premise {old!r} as still true.",
        f"The response applies the updated situation {new!r} to the decision.",
    )


def judge_episode(
    model: ChatModel, episode: Episode, answers: Sequence[str | None]
) -> dict[str, float]:
    """Answer-level metrics from an LLM judge: STALE probes, or Memora's criteria."""
    if "M_old" in episode.judge:
        passed = [
            model.judge(p.question, a or "", c)
            for p, a, c in zip(episode.probes, answers, stale_criteria(episode.judge), strict=True)
        ]
        return {"SR": float(passed[0]), "PR": float(passed[1]), "IPA": float(passed[2])}
    if "criteria" in episode.judge:
        response = answers[0] or ""
        presence: list[bool] = []
        forgetting: list[bool] = []
        for criterion in episode.judge["criteria"]:
            met = model.judge(
                episode.probes[0].question,
                response,
                f"{criterion['evaluation_question']} (expected: {criterion['expected_answer']})",
            )
            kind = criterion.get("evaluation_type", "")
            (forgetting if kind.startswith("forgetting") else presence).append(met)
        scores = metrics.memora_question(presence, forgetting)
        return {f"answer_{k}": v for k, v in scores.items()}
    return {}
