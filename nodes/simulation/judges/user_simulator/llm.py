"""The LLM ``user_simulator`` (``<provider>:<model>``): an LLM plays the user.

:data:`~nodes.prompts.simulation.USER_SIMULATOR_PROMPT` (tau2's simulation guidelines plus the
persona lines) through :class:`~nodes.judges.llm.LLMJudge`, one call per reply. It is told of a
goal shift on that shift's turn; slots it reports outside the goal are dropped.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.prompts.simulation import (
    COOPERATIVENESS_LINES,
    DISCLOSURE_LINES,
    USER_SIMULATOR_PROMPT,
    USER_SIMULATOR_SYSTEM_PROMPT,
    VERBOSITY_LINES,
)
from todeval.nodes.simulation.judges.user_simulator.role import (
    SIMULATOR_ROLE,
    Persona,
    SimulatedTurn,
    SimulationRequest,
)
from todeval.nodes.simulation.judges.user_simulator.words import (
    announce_shift,
    render_goal,
    render_history,
    slots_in_words,
)


class LLMUserTurn(BaseModel):
    """The LLM simulator's answer."""

    utterance: str = Field(min_length=1, description="The user's next message.")
    revealed_slots: dict[str, str] = Field(
        default_factory=dict, description="Slot -> the value the message states."
    )
    stop: bool = Field(default=False, description="True if the message ends with ###STOP###.")


class LLMUser(LLMRole[LLMUserTurn]):
    """An LLM plays the user (:data:`USER_SIMULATOR_PROMPT`)."""

    role = SIMULATOR_ROLE
    prompt = USER_SIMULATOR_PROMPT
    system = USER_SIMULATOR_SYSTEM_PROMPT
    output_model = LLMUserTurn

    def reply(self, request: SimulationRequest) -> SimulatedTurn:
        """One call per reply; a failed call yields an empty utterance with the reason."""
        goal = request.scenario.goal_at(request.turn_index)
        shift = request.scenario.shift_at(request.turn_index)
        result = self.llm.invoke(
            {
                "persona": _persona_lines(request.persona),
                "instructions": request.scenario.instructions.strip() or "none",
                "task_goal": render_goal(goal),
                "focus_slots": slots_in_words(request.open_slots) or "none",
                "goal_shift": announce_shift(shift.updates) if shift is not None else "none",
                "conversation_history": render_history(request.history),
                "asked_slots": slots_in_words(request.asked_slots) or "none",
            }
        )
        if result.value is None:
            return SimulatedTurn(utterance="", judge=self.name, reason=result.reason)
        said = result.value
        utterance = said.utterance.replace("###STOP###", "").strip()
        revealed = {slot: str(value) for slot, value in said.revealed_slots.items() if slot in goal}
        stop = said.stop or "###STOP###" in said.utterance
        return SimulatedTurn(
            utterance=utterance or said.utterance,
            revealed_slots=revealed,
            stop=stop,
            goal_shift=shift is not None,
            judge=self.name,
        )


def _persona_lines(persona: Persona) -> str:
    lines = [
        DISCLOSURE_LINES[persona.disclosure],
        VERBOSITY_LINES[persona.verbosity],
        COOPERATIVENESS_LINES[persona.answers_only_asked],
    ]
    return "\n".join([*lines, persona.style.strip()] if persona.style.strip() else lines)
