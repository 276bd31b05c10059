# ruff: noqa: E501  (sentences of data: a request is one line)
"""Questions about the user's own life and the people in it, written for recallwise (source id
``rw-written-life``, third round), and questions of the same shapes about famous people, places and
events (the contrast).

True (kinds ``people``, ``recall``, ``reminder``): only the user's stored memory answers them --
what a friend or relative of theirs did, said, likes or is called, when something in their own life
happened, what they told the assistant. The people are named by a bare first name (a friend, a
colleague: nobody the world knows) or by their relation to the user. The first names here leave out
every speaker of LoCoMo (its questions measure this gate and must not be in its fit).

False (kind ``fact``): the same shapes about people, places, organisations and events the world
knows ("When did Marie Curie move to Paris?", "Tell me about the Hoover Dam"): general knowledge,
which no personal memory improves.

Each template is one *group* (all its fillings in one split), as in ``written_en``.
"""

from __future__ import annotations

# first names of nobody famous on their own; none is a LoCoMo speaker (Caroline, Melanie, Jon, Gina,
# John, Maria, Joanna, Nate, Tim, Audrey, Andrew, James, Deborah, Jolene, Evan, Sam, Calvin, Dave)
NAMES = [
    "Priya", "Tomasz", "Leila", "Marcus", "Hannah", "Diego", "Yuki", "Fatima", "Oskar", "Chloe",
    "Rahul", "Ingrid", "Kwame", "Sofia", "Mateo", "Aisha", "Lukas", "Nadia", "Ethan", "Mei",
    "Gabriel", "Zoe", "Ravi", "Clara", "Omar", "Bianca", "Felix", "Amara", "Hugo", "Lena",
    "Jonas", "Rosa", "Theo", "Keiko", "Samir", "Elif", "Noah", "Greta", "Arjun", "Maya",
    "Pedro", "Ines", "Ben", "Olga", "Kofi", "Freya", "Emre", "Lucia", "Ali", "Tessa",
    "Dmitri", "Anya", "Jasper", "Nora", "Kenji", "Carmen", "Eli", "Hana", "Victor", "Ruth",
    "Mila", "Ahmed", "Paula", "Finn", "Sana", "Ivan", "Leo", "Alba", "Tariq", "Beth",
]  # fmt: skip
RELATIVES = [
    "my sister", "my brother", "my mum", "my dad", "my wife", "my husband", "my partner",
    "my daughter", "my son", "my nephew", "my niece", "my grandma", "my grandpa", "my aunt",
    "my uncle", "my cousin", "my best friend", "my boss", "my neighbour", "my roommate",
    "my mother-in-law", "my stepdad", "my godson", "my coworker",
]  # fmt: skip
EVENTS = [
    "support group", "pottery class", "adoption meeting", "job interview", "charity run",
    "book club", "parent-teacher meeting", "yoga retreat", "open mic night", "art fair",
    "cooking workshop", "volunteer day at the shelter", "wedding rehearsal", "career fair",
    "climbing gym", "community garden meeting", "therapy session", "housewarming", "baby shower",
    "church picnic", "salsa class", "school play", "hackathon", "farmers market",
]  # fmt: skip
ACTIVITIES = [
    "learning the guitar", "volunteering at the animal shelter", "working at the bakery",
    "training for the marathon", "painting", "taking Spanish lessons", "doing pottery",
    "writing her novel", "coaching the kids' soccer team", "renovating the house",
    "running the food truck", "studying for the bar exam", "fostering dogs", "learning to surf",
    "playing in a band", "blogging about vegan recipes", "doing CrossFit", "going to therapy",
]  # fmt: skip
THINGS = [
    "dog", "cat", "kids", "car", "band", "bakery", "startup", "podcast", "garden", "new flat",
    "daughter", "son", "horse", "boyfriend", "girlfriend", "book", "YouTube channel", "shop",
]  # fmt: skip
TOPICS = [
    "the move", "the wedding", "her new job", "the trip to Portugal", "the surgery", "the baby",
    "the divorce", "his promotion", "the house sale", "the concert", "the adoption", "school",
    "the argument", "the new apartment", "their holiday", "the fundraiser", "her exams",
]  # fmt: skip
CITIES = [
    "Lyon", "Denver", "Krakow", "Osaka", "Leeds", "Austin", "Porto", "Tucson", "Graz",
    "Halifax", "Bologna", "Wellington", "Gdansk", "Malmo", "Boise", "Cork",
]  # fmt: skip
ATTRIBUTES = [
    "blood type", "home address", "passport number", "wifi password", "dentist's phone number",
    "licence plate", "shoe size", "frequent flyer number", "doctor's name", "middle name",
    "anniversary date", "gate code", "locker number", "insurance policy number", "work address",
]  # fmt: skip
MONTHS = ["January", "March", "May", "July", "August", "September", "October", "December"]

# ---- True: people in the user's life, named by first name (third person, as a memory holds them)
PEOPLE_TEMPLATES: list[tuple[str, str]] = [
    ("people", "When did {name} go to the {event}?"),
    ("people", "What did {name} buy for {name2}'s birthday?"),
    ("people", "Where did {name} move from?"),
    ("people", "What are {name}'s kids called?"),
    ("people", "What's the name of {name}'s {thing}?"),
    ("people", "How long has {name} been {activity}?"),
    ("people", "What does {name} do to relax?"),
    ("people", "Which cities has {name} visited this year?"),
    ("people", "What did {name} and {name2} talk about at the {event}?"),
    ("people", "Is {name} still {activity}?"),
    ("people", "Why did {name} quit the {event}?"),
    ("people", "What book did {name} recommend to me?"),
    ("people", "What did {name} say about {topic}?"),
    ("people", "How old is {name}'s daughter now?"),
    ("people", "When is {name}'s birthday?"),
    ("people", "What is {name} allergic to?"),
    ("people", "What does {name} do for work?"),
    ("people", "Who did {name} go camping with last summer?"),
    ("people", "What was {name} painting last month?"),
    ("people", "Did {name} end up taking the job in {city}?"),
    ("people", "When did {name} get the {thing}?"),
    ("people", "What happened to {name}'s {thing}?"),
    ("people", "How did {name} and {name2} meet?"),
    ("people", "What does {name} like to cook?"),
    ("people", "Where is {name} going on holiday in {month}?"),
    ("people", "What did {name} win at the {event}?"),
    ("people", "Which team does {name} support?"),
    ("people", "What instrument does {name}'s son play?"),
    ("people", "What was {name} worried about last time we spoke?"),
    ("people", "What did {name} get for her graduation?"),
    ("people", "Has {name} finished {activity}?"),
    ("people", "What colour did {name} paint the {thing}?"),
    ("people", "Why was {name} upset in {month}?"),
    ("people", "What gift did I give {name} last Christmas?"),
    ("people", "Which restaurant did {name} recommend in {city}?"),
    ("people", "When did {name} start {activity}?"),
    ("people", "Who is {name} dating now?"),
    ("people", "What's {name}'s new address in {city}?"),
    ("people", "What did {name} name the {thing}?"),
    ("people", "How many kids does {name} have?"),
    ("people", "what did {name} think of the {event}"),
    ("people", "where does {name} work these days"),
    ("people", "did {name} ever hear back about the {event}"),
    ("people", "What are {name}'s plans for {month}?"),
    ("people", "Was {name} at the {event} in {month}?"),
    ("people", "Which of {name}'s friends went to the {event}?"),
    ("people", "What does {name} want to do after {topic}?"),
    ("people", "What did {name} and her kids make at the {event}?"),
    ("people", "What inspired {name} to start {activity}?"),
    ("people", "Has {name} been to {city} before?"),
    ("people", "Who helped {name} with {topic}?"),
    ("people", "What does {name} use to remember her grandmother?"),
    ("people", "What did {name} drop off at the shelter?"),
    ("people", "How does {name} feel about {topic} now?"),
]
# ---- True: the user's own life, history and what they told the assistant (first person)
OWN_TEMPLATES: list[tuple[str, str]] = [
    ("recall", "When did I last go to the dentist?"),
    ("recall", "What did I tell you about {topic}?"),
    ("recall", "How old is {relative}?"),
    ("recall", "When is {relative}'s birthday?"),
    ("recall", "What did {relative} say about {topic}?"),
    ("recall", "What's the name of {relative}'s {thing}?"),
    ("recall", "Where did I say I parked?"),
    ("recall", "When did I move to {city}?"),
    ("recall", "What was the name of the {event} I went to in {month}?"),
    ("recall", "Which doctor did I see about my back?"),
    ("recall", "How much did I lend {relative}?"),
    ("recall", "What did I get {relative} for their birthday last year?"),
    ("recall", "Do you remember what I was stressed about in {month}?"),
    ("recall", "what did i decide about {topic}"),
    ("recall", "When did {relative} start at the new school?"),
    ("recall", "What time is {relative}'s flight on Friday?"),
    ("recall", "What did we do for our anniversary last year?"),
    ("recall", "Which day did I say the plumber is coming?"),
    ("recall", "How long have I been {activity}?"),
    ("recall", "What was I reading last month?"),
    ("recall", "Who did I meet at the {event}?"),
    ("recall", "Where did {relative} and I stay in {city}?"),
    ("recall", "What's {relative}'s shoe size?"),
    ("recall", "Did I ever tell you where {relative} works?"),
    ("recall", "What did I name my {thing}?"),
    ("recall", "When did I adopt the dog?"),
    ("recall", "remind me what {name} and I argued about"),
    ("recall", "What did I promise {name} I'd bring to the {event}?"),
    ("recall", "What was the last thing I told you about {name}?"),
    ("recall", "Which vaccines has {relative} had?"),
    ("recall", "What's my login for the gym app again?"),
    ("recall", "What did I say my goals were for this year?"),
    ("recall", "What's my {attribute}?"),
    ("recall", "do you know my {attribute}"),
    ("recall", "Can you tell me {relative}'s {attribute} again?"),
    ("recall", "What do you know about me so far?"),
    ("recall", "What have I told you about {relative}?"),
    ("recall", "Which nickname did I ask you to use for me?"),
    ("recall", "What's {relative}'s phone number?"),
    ("reminder", "Remind me what I need to bring to the {event}."),
    ("reminder", "Is there anything I said I'd do for {relative} this week?"),
    ("reminder", "What was I supposed to remember about {topic}?"),
    ("reminder", "Did I say I had something on in {month}?"),
    ("reminder", "What's coming up with {name} that I should know about?"),
    ("reminder", "remind me when {relative}'s appointment is"),
    # who the user is, as they told it (a name, an age, a home): what a stored profile answers
    ("recall", "What's my name?"),
    ("recall", "Do you remember my name?"),
    ("recall", "what name did I tell you"),
    ("recall", "How do I like to be addressed?"),
    ("recall", "Which name do you have on file for me?"),
    ("recall", "Who am I? What do you know about me?"),
    ("recall", "How old am I again?"),
    ("recall", "When's my birthday?"),
    ("recall", "Where do I live?"),
    ("recall", "Which city am I from?"),
    ("recall", "What do I do for a living?"),
    ("recall", "Who do I work for?"),
    ("recall", "What's my wife called?"),
    ("recall", "What are my kids' names?"),
    ("recall", "What did I say my pronouns are?"),
    ("recall", "What's my dog's name again?"),
    ("recall", "Which languages do I speak?"),
    ("recall", "What's my email address?"),
    ("recall", "what's my surname"),
    ("recall", "Do you know where I grew up?"),
    ("recall", "Can you remind me of my own {attribute}?"),
    ("recall", "Tell me my {attribute}, I've forgotten it"),
    ("recall", "What did I ask you to call me?"),
    ("recall", "What's my nickname?"),
    ("recall", "Am I allergic to anything?"),
    ("recall", "What's my job title?"),
]

# ---- False: the same shapes about people, places and events the world knows
FAMOUS_PEOPLE = [
    "Marie Curie", "Napoleon", "Nelson Mandela", "Frida Kahlo", "Albert Einstein",
    "Serena Williams", "Taylor Swift", "Leonardo da Vinci", "Abraham Lincoln", "Cleopatra",
    "Ada Lovelace", "Mahatma Gandhi", "Pablo Picasso", "Queen Victoria", "Barack Obama",
    "Beyonce", "William Shakespeare", "Isaac Newton", "Winston Churchill", "Steve Jobs",
    "Charles Darwin", "Mozart", "Lionel Messi", "Martin Luther King Jr.", "Jane Austen",
    "Vincent van Gogh", "Nikola Tesla", "Amelia Earhart", "Julius Caesar", "Michael Jordan",
    "Oprah Winfrey", "Galileo", "Karl Marx", "Coco Chanel", "Bob Marley", "Rosa Parks",
    "Ernest Hemingway", "Catherine the Great", "Bruce Lee", "Agatha Christie",
]  # fmt: skip
PLACES = [
    "the Hoover Dam", "the Krasnodar Oil Refinery", "the Port of Rotterdam", "Angkor Wat",
    "the Panama Canal", "the Large Hadron Collider", "Machu Picchu", "the Suez Canal",
    "the Three Gorges Dam", "Chernobyl", "the Burj Khalifa", "the Sagrada Familia",
    "the Great Barrier Reef", "the International Space Station", "the Louvre", "Petra",
    "the Golden Gate Bridge", "the Atacama Desert", "the Hagia Sophia", "Stonehenge",
]  # fmt: skip
HISTORIC_EVENTS = [
    "the French Revolution", "the moon landing", "the fall of the Berlin Wall",
    "the Battle of Hastings", "the 2008 financial crisis", "the Cuban Missile Crisis",
    "the Black Death", "the Boston Tea Party", "the Chernobyl disaster", "the first World Cup",
    "the Meiji Restoration", "the Apollo 13 mission", "the sinking of the Titanic",
]  # fmt: skip
FICTION = [
    "Sherlock Holmes", "Elizabeth Bennet", "Harry Potter", "Frodo", "Captain Ahab", "Jay Gatsby",
    "Hermione Granger", "Don Quixote", "Atticus Finch", "Anna Karenina",
]  # fmt: skip
FAMOUS_TEMPLATES: list[tuple[str, str]] = [
    ("fact", "When did {famous} die?"),
    ("fact", "Where was {famous} born?"),
    ("fact", "What is {famous} famous for?"),
    ("fact", "Who was {famous} married to?"),
    ("fact", "Why did {famous} move to {famous_city}?"),
    ("fact", "What did {famous} study?"),
    ("fact", "Tell me about {famous}'s childhood."),
    ("fact", "How many children did {famous} have?"),
    ("fact", "What did {famous} say about education?"),
    ("fact", "who was {famous}"),
    ("fact", "What was {famous}'s biggest achievement?"),
    ("fact", "How old was {famous} when they became famous?"),
    ("fact", "Write a short biography of {famous}."),
    ("fact", "Tell me about {place}."),
    ("fact", "When was {place} built?"),
    ("fact", "Who owns {place}?"),
    ("fact", "What happened at {place}?"),
    ("fact", "how big is {place}"),
    ("fact", "Why is {place} important?"),
    ("fact", "What caused {historic}?"),
    ("fact", "When did {historic} happen?"),
    ("fact", "Who was involved in {historic}?"),
    ("fact", "Summarise {historic} in three sentences."),
    ("fact", "What did {fiction} do at the end of the book?"),
    ("fact", "Who is {fiction}'s best friend?"),
    ("fact", "Describe {fiction}'s personality."),
    ("fact", "What is {fiction} afraid of?"),
    ("fact", "Compare {famous} and {famous2}."),
    ("fact", "Did {famous} ever meet {famous2}?"),
]
FAMOUS_CITIES = ["Paris", "London", "New York", "Vienna", "Rome", "Berlin", "Moscow", "Tokyo"]
